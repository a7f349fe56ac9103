"""Where the time of ``riskgrid meter-report FILE --report out.pdf`` goes (prints JSON).

Each repeat is one fresh process that runs the command as a user does (``python -m
ranking_core.cli meter-report FILE --report OUT``, from the checkout ``--root``) with timers
around the steps of its document (:func:`ranking_core.meter.pipeline.report_document`):

* ``import_matplotlib``: ``matplotlib.figure`` and the Agg backend, the first time;
* ``import_documents``: the rest of ``ranking_core.meter.documents.document`` (the report's
  content and figure modules);
* ``import_reportlab``: ``ranking_core.meter.documents.pdf`` and ReportLab;
* ``content_and_figures``: ``report_blocks``, the content with every figure built;
* ``drawing``: every figure drawn by Agg into an image (``pdf._raster``);
* ``reportlab``: ReportLab laying out and writing the pages (``report_pdf`` less the drawing);
* ``document``: all of the above, the PDF's whole cost beyond the report itself.

Seconds of CPU (this process, user + system) and wall; each stage's best and median over the
repeats, each root's repeats taken in turn with the other roots' (a change of load falls on
both). The files are those of ``benchmarks/meter_command.py`` (``meter``: 10,000 meter pairs;
``cgm``: the CGM study of 10,000 pairs).

    SEG_TABLE=/path/RiskPairData.csv.gz PYTHONPATH=. python benchmarks/pdf_stages.py \\
        [--files meter cgm] [--repeat 5] [--root . --root /other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from meter_command import cgm_study, meter_pairs  # this folder's benchmark

STAGES = (
    "import_matplotlib",
    "import_documents",
    "import_reportlab",
    "content_and_figures",
    "drawing",
    "reportlab",
    "document",
)

# Run in the child: the command, with the document's steps timed (wrapped, not redone); prints
# {stage: [cpu, wall]} as JSON on stderr's last line.
TIMED_COMMAND = r"""
import json, runpy, sys, time

import ranking_core.meter.pipeline as pipeline

spent = {}


def timed(stage, work, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        return work(*args, **kwargs)
    finally:
        cpu_wall = spent.setdefault(stage, [0.0, 0.0])
        cpu_wall[0] += time.process_time() - cpu
        cpu_wall[1] += time.perf_counter() - wall


def imported(name):
    __import__(name)
    return sys.modules[name]


whole_document = pipeline.report_document


def report_document(report, suffix, name=None):
    timed("import_matplotlib", imported, "matplotlib.backends.backend_agg")
    timed("import_matplotlib", imported, "matplotlib.figure")
    document = timed("import_documents", imported, "ranking_core.meter.documents.document")
    pdf = timed("import_reportlab", imported, "ranking_core.meter.documents.pdf")
    blocks, raster, layout = document.report_blocks, pdf._raster, document.report_pdf
    document.report_blocks = lambda *a, **k: timed("content_and_figures", blocks, *a, **k)
    pdf._raster = lambda *a, **k: timed("drawing", raster, *a, **k)
    document.report_pdf = lambda *a, **k: timed("reportlab", layout, *a, **k)
    return timed("document", whole_document, report, suffix, name)


pipeline.report_document = report_document
sys.argv = ["riskgrid", *sys.argv[1:]]
try:
    runpy.run_module("ranking_core.cli", run_name="__main__")
except SystemExit as stop:
    if stop.code:
        raise
spent["reportlab"] = [a - b for a, b in zip(spent["reportlab"], spent["drawing"])]
for stage in ("import_matplotlib", "import_documents", "import_reportlab"):
    spent["document"] = [a + b for a, b in zip(spent["document"], spent[stage])]
sys.stderr.write("\n" + json.dumps(spent) + "\n")
"""


def run_stages(root: Path, pairs: Path, out: Path) -> dict[str, list[float]]:
    """{stage: [CPU s, wall s]} of one ``meter-report … --report`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", TIMED_COMMAND, "meter-report", str(pairs), "--report", str(out)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"meter-report failed in {root}: {done.stderr[-2000:]}")
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", nargs="+", choices=("meter", "cgm"), default=["meter", "cgm"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, action="append", help="checkouts to time in turn")
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root or [Path(__file__).resolve().parents[1]]]
    runs: dict[tuple[str, str], list[dict[str, list[float]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {}
        for name in args.files:
            frame = meter_pairs() if name == "meter" else cgm_study()
            files[name] = folder / f"{name}.csv"
            frame.to_csv(files[name], index=False)
        for _ in range(args.repeat):
            for name, path in files.items():
                for root in roots:
                    found = run_stages(root, path, folder / "out.pdf")
                    runs.setdefault((str(root), name), []).append(found)
    results = []
    for (root, name), found in runs.items():
        stages = {}
        for stage in STAGES:
            cpu = [run[stage][0] for run in found]
            wall = [run[stage][1] for run in found]
            stages[stage] = {
                "best_cpu_s": round(min(cpu), 3),
                "median_cpu_s": round(statistics.median(cpu), 3),
                "best_s": round(min(wall), 3),
                "median_s": round(statistics.median(wall), 3),
            }
        results.append({"root": root, "file": name, "stages": stages})
    print(
        json.dumps(
            {"load_average": [round(x, 2) for x in os.getloadavg()], "runs": results}, indent=2
        )
    )


if __name__ == "__main__":
    main()
