"""A terminal table that Rich would draw wider than the console (its columns cannot shrink to
fit) is stacked row by row, never cut at the console's edge."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from ranking_core.cli.text_tables import print_table

BIAS = pd.DataFrame(
    {
        "regression": ["Passing–Bablok", "Deming"],
        "decision level (mg/dL)": ["70", "180"],
        "bias (mg/dL)": ["1.13", "4.15"],
        "95% lower (mg/dL)": ["0.32", "2.93"],
        "95% upper (mg/dL)": ["1.6", "4.97"],
        "bias (% of level)": ["1.61", "2.3"],
    }
)


def _drawn(text: pd.DataFrame, width: int) -> str:
    out = io.StringIO()
    console = Console(width=width, file=out, color_system=None, soft_wrap=True)
    print_table(console, "Bias at the decision levels", text)
    return out.getvalue()


def test_a_table_too_wide_for_the_console_is_stacked_and_nothing_is_cut():
    drawn = _drawn(BIAS, 80)
    lines = drawn.splitlines()
    assert max(len(line) for line in lines) <= 80
    flat = " ".join(drawn.split())
    for column in BIAS.columns[1:]:  # every header whole, as a row label of the stacked tables
        assert f" {column} " in flat, column
    for cell in BIAS.to_numpy().ravel():
        assert cell in flat
    # wide enough, the same table is drawn whole: one header row
    assert sum("regression" in line for line in _drawn(BIAS, 120).splitlines()) == 1
