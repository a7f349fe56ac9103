from ranking_core.cli import app, without_arrow

without_arrow()
app(prog_name="riskgrid")
