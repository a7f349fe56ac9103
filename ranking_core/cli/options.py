"""Typer options that several commands take, defined once: the random seed of the papers'
reproductions and experiments, and the protocol of the papers' tables (which function is
tested, :data:`~ranking_core.lambda_rules.PROTOCOLS`)."""

from __future__ import annotations

from typing import Annotated

import typer

from ranking_core.lambda_rules import PROTOCOLS
from ranking_core.validation import MAX_SEED

__all__ = ["ProtocolOption", "SeedOption"]

SeedOption = Annotated[int, typer.Option(help="Random seed.", min=0, max=MAX_SEED)]
ProtocolOption = Annotated[
    str,
    typer.Option(
        help="Which function is tested: "
        + "; ".join(f"{name}: {text}" for name, text in PROTOCOLS.items())
        + "."
    ),
]
