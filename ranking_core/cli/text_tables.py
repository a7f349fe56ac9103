"""Tables of text in the terminal that fit its width: a table whose columns fit (each at least as
wide as its longest word, numbers whole) is printed as a table whose long texts wrap; one that
does not is stacked, each row as a small "header: value" table. Nothing is ever cut ("…").
The width is the console's: the terminal's, else $COLUMNS, else 80 (piped or redirected)."""

from __future__ import annotations

import re

import pandas as pd
from rich.console import Console
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from ranking_core.inputs.text import printable

__all__ = ["NUMBER_WIDTH", "print_table", "table_fits"]

NUMBER_WIDTH = 16  # characters: cells no longer than this (numbers, intervals) never wrap
_BORDER = 3  # characters a column adds to a table ("│ " and " ") beside its content
_NUMBER = re.compile(r"[-+−]?[\d,.]+( ?%)?( / [\d,]+)?|[\d.,]+–[\d.,]+|—|[-+−]?[\d,]+ \([\d.]+ %\)")


def _minimum(values: list[str], header: str) -> int:
    """The narrowest a column can be without cutting a word: its longest word, or its longest
    cell when every cell is short (numbers, verdicts, intervals stay on one line)."""
    words = [len(w) for v in [*values, header] for w in v.split()] or [0]
    longest = max((len(v) for v in values), default=0)
    return max(max(words), longest if longest <= NUMBER_WIDTH else 0)


def table_fits(text: pd.DataFrame, width: int) -> bool:
    """Whether ``text``'s columns fit ``width`` characters without cutting a word."""
    cells = text.astype(str)
    need = sum(_minimum(list(cells[c]), str(c)) for c in cells.columns)
    return need + _BORDER * len(cells.columns) + 1 <= width


def _table(title: str | None, text: pd.DataFrame, styles: dict[str, str]) -> Table:
    table = Table(title=None if title is None else Text(title), title_justify="left")
    cells = text.astype(str)
    for i, column in enumerate(cells.columns):
        values = list(cells[column])
        numbers = i > 0 and all(_NUMBER.fullmatch(v) for v in values)
        table.add_column(
            Text(str(column)),
            justify="right" if numbers else "left",
            min_width=_minimum(values, str(column)),
            overflow="fold",
        )
    for row in cells.itertuples(index=False):
        table.add_row(*(Text(cell, style=styles.get(cell, "")) for cell in row))
    return table


def _drawn(console: Console, table: Table) -> list[Segment] | None:
    """``table`` drawn as ``console.print(table, soft_wrap=False)`` draws it, or None when a
    line is wider than the console (Rich draws a table wider when its columns cannot shrink:
    then it does not fit). Drawn once, printed as drawn."""
    options = console.options.update(
        justify=None, overflow=None, height=None, no_wrap=None, markup=None, highlight=None
    )
    segments = list(console.render(table, options))
    lines = Segment.split_lines(segments)
    widest = max((Segment.get_line_length(line) for line in lines), default=0)
    return segments if widest <= console.width else None


def print_table(
    console: Console,
    title: str,
    text: pd.DataFrame,
    caption: str = "",
    styles: dict[str, str] | None = None,
) -> None:
    """Print a table of text at the console's width: whole when its columns fit, else stacked
    (one "header │ value" table per row, named by the row's first cell); ``styles`` colours
    cells by their text (verdicts), ``caption`` follows it. Every text is shown literally, its
    control characters escaped."""
    styles = styles or {}
    # user text: control and bidi characters shown escaped, never read as markup (Text)
    text = text.map(printable)
    text.columns = [printable(c) for c in text.columns]
    title, caption = printable(title), printable(caption)
    fits = table_fits(text, console.width)
    drawn = _drawn(console, _table(title, text, styles)) if fits else None
    if drawn is not None:
        console.print(Segments(drawn), soft_wrap=False)
    else:
        console.print(Text(title, style="italic"), soft_wrap=False)
        cells = text.astype(str)
        first = cells.columns[0]
        for _, row in cells.iterrows():
            record = pd.DataFrame({"": list(cells.columns[1:]), row[first]: list(row.iloc[1:])})
            console.print(_table(None, record, styles), soft_wrap=False)
    if caption:
        console.print(Text(caption), soft_wrap=False)
