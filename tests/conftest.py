"""Test configuration: point SEG_TABLE and MOVIELENS_100K at ../shared when they are unset."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

for variable, default in (
    ("SEG_TABLE", SHARED / "data" / "seg" / "RiskPairData.csv.gz"),
    ("MOVIELENS_100K", SHARED / "data" / "cf" / "ml-100k"),
):
    if not os.environ.get(variable) and default.exists():
        os.environ[variable] = str(default)
