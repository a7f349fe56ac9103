"""The Meter page's inputs: the built-in demonstration set, uploaded BGM/REF pairs, and a sensor
series paired with a reference series (each read once per file and choice: cached), the glucose
unit chosen for a file and the reader's messages as plain text."""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from ranking_core.inputs import MGDL_PER_MMOLL, UNITS
from ranking_core.inputs.series import GlucoseSeries, read_series
from ranking_core.meter import MeterPairs, read_pairs
from ranking_core.meter.pairs.pairing import Pairing, pair_series
from ranking_core.panels import simulate_panel

DEMO_PAIRS = 200  # pairs in the built-in demonstration set


@st.cache_data(show_spinner=False, max_entries=4)
def demo_pairs(n: int) -> pd.DataFrame:
    """Simulated meter readings near the diagonal (the panel simulator's near-diagonal design:
    estimate = REF·exp(N(0, 0.25²))), as BGM/REF pairs."""
    panel = simulate_panel(n, design="near-diagonal", outlier_fraction=0.0, random_state=7)
    return pd.DataFrame({"BGM": panel["estimate"], "REF": panel["reference"]})


# how messages name the Meter page's controls (by their labels)
UNIT_CONTROL = 'the "glucose unit of this file" choice'
ORDER_CONTROL = 'the "day/month order of the dates" choice'
DEVICE_CONTROL = 'the "sensor device" choice'
ORDERS = {"automatic": None, "day first": True, "month first": False}  # → read_series dayfirst
ALL_DEVICES = "every device (refused if they overlap in time)"


@st.cache_data(show_spinner="Reading the pairs…", max_entries=8)
def uploaded(content: bytes, name: str, unit: str | None) -> MeterPairs:
    return read_pairs(io.BytesIO(content), name=name, unit=unit, unit_option=UNIT_CONTROL)


@st.cache_data(show_spinner="Reading the series…", max_entries=8)
def series(
    content: bytes, name: str, format: str, unit: str | None, dayfirst: bool | None
) -> GlucoseSeries:
    return read_series(
        content,
        format,
        unit=unit,
        name=name,
        unit_option=UNIT_CONTROL,
        dayfirst=dayfirst,
        order_option=ORDER_CONTROL,
    )


@st.cache_data(show_spinner="Pairing the series…", max_entries=4)
def paired(
    sensor: tuple[bytes, str],
    reference: tuple[bytes, str],
    format: str,
    unit: str | None,
    dayfirst: bool | None,
    window: float,
    lag: float,
    device: str | None,
) -> tuple[Pairing, MeterPairs]:
    """The pairing and its pairs for the report (with their times: iCGM J/K)."""
    pairing = pair_series(
        series(*sensor, format, unit, dayfirst),
        series(*reference, format, unit, dayfirst),
        window=window,
        lag=lag,
        device=device,
        device_option=DEVICE_CONTROL,
    )
    return pairing, pairing.meter_pairs()


def show_reading(messages: list[str] | tuple[str, ...]) -> None:
    """The reader's summary and its refusals and notes, as plain text (never Markdown)."""
    st.text(messages[0])
    if len(messages) > 1:
        with st.expander(f"Refused rows and notes ({len(messages) - 1})"):
            st.text("\n".join(messages[1:]))


def unit_choice(files: str) -> str | None:
    """The glucose unit chosen for these files (``files`` names them: a new file starts with no
    choice, so that a unit never carries over to the next upload)."""
    return st.radio(
        "glucose unit of this file",
        UNITS,
        index=None,
        horizontal=True,
        key=f"meter_unit {files}",
        help="Not chosen: the unit named in the column "
        "headers, else mg/dL; values that look like mmol/L are refused until it is "
        "chosen, and mmol/L chosen for values that look like mg/dL is refused. "
        f"mmol/L is converted with {MGDL_PER_MMOLL} mg/dL per mmol/L.",
    )
