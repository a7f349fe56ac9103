"""Collaborative filtering: the ranking learners on MovieLens / Jester or synthetic ratings."""

import streamlit as st

st.title("Collaborative filtering")
