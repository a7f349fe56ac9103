"""The ``riskgrid`` command line: one module per command group, registered here."""

from __future__ import annotations

import typer

from ranking_core.cli import cf, dashboard, learn, learners, meter, pair, panels, reproduce

app = typer.Typer(
    name="riskgrid",
    help="Learned clinical error grids by regularized ranking.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(reproduce.app, name="reproduce")
app.add_typer(learners.app, name="learners")
app.command("meter-report")(meter.meter_report)
app.command("pair")(pair.pair)
app.command("learn")(learn.learn)
app.command("plan-panel")(panels.plan_panel)
app.add_typer(cf.app, name="cf")
app.add_typer(dashboard.app, name="dashboard")


def main() -> None:  # pragma: no cover - console entry point
    app()
