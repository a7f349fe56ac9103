from ranking_core.cli import app

app(prog_name="riskgrid")
