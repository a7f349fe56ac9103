"""One-click report timings (JSON): the PDF and HTML meter report of n synthetic pairs.

    SEG_TABLE=/path/RiskPairData.csv.gz PYTHONPATH=. python benchmarks/report.py [--n 10000]
        [--repeats 3] [--kaleido]

Wall and CPU seconds per stage (statistics, plots, PDF) for each repeat; the first repeat pays
matplotlib's and ReportLab's one-off start-up (fonts). ``--kaleido`` also times one error-grid
figure through the browser-based Plotly export in the same process, against the same figure drawn
by matplotlib, and prints their ratio (the reason the report draws with matplotlib).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import pandas as pd

from ranking_core.grids import find_seg_table
from ranking_core.meter import meter_report
from ranking_core.meter.documents.document import report_blocks, report_html, report_pdf


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, round(time.perf_counter() - wall, 3), round(time.process_time() - cpu, 3)


def _kaleido_ratio(ref: np.ndarray, bgm: np.ndarray) -> dict:
    from ranking_core.grids import zone_grid
    from ranking_core.meter.documents.export import figure_png as plotly_png
    from ranking_core.meter.documents.figures import risk_heatmap
    from ranking_core.meter.drawing.grid_plots import figure_png, grid_plot

    report = meter_report(pd.DataFrame({"BGM": bgm, "REF": ref}), None)
    plotly_fig = risk_heatmap(zone_grid("dts"), title="DTS", pairs=report)
    _, kaleido_s, _ = _timed(lambda: plotly_png(plotly_fig))
    _, matplotlib_s, _ = _timed(lambda: figure_png(grid_plot("dts", ref, bgm)))
    return {
        "kaleido_png_s": kaleido_s,
        "matplotlib_png_s": matplotlib_s,
        "kaleido_over_matplotlib": round(kaleido_s / matplotlib_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kaleido", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ref = np.rint(np.exp(rng.uniform(np.log(20), np.log(600), args.n)))
    bgm = np.clip(np.rint(ref * np.exp(0.12 * rng.standard_normal(args.n))), 0, 650)
    seg = find_seg_table() if os.environ.get("SEG_TABLE") else None
    frame = pd.DataFrame({"BGM": bgm, "REF": ref})
    runs = []
    for _ in range(args.repeats):
        report, report_wall, report_cpu = _timed(lambda: meter_report(frame, seg))
        blocks, blocks_wall, blocks_cpu = _timed(
            lambda report=report: report_blocks(report, seg, name="synthetic")
        )
        pdf, pdf_wall, pdf_cpu = _timed(lambda blocks=blocks: report_pdf(blocks))
        page, html_wall, _ = _timed(lambda blocks=blocks: report_html(blocks))
        runs.append(
            {
                "meter_report_s": report_wall,
                "content_and_plots_s": blocks_wall,
                "pdf_s": pdf_wall,
                "html_s": html_wall,
                "pdf_total_wall_s": round(report_wall + blocks_wall + pdf_wall, 3),
                "pdf_total_cpu_s": round(report_cpu + blocks_cpu + pdf_cpu, 3),
                "pdf_bytes": len(pdf),
                "html_bytes": len(page),
            }
        )
    out = {
        "n_pairs": args.n,
        "seg_table": seg is not None,
        "load_average": os.getloadavg(),
        "runs": runs,
        "goal_pdf_s": 5.0,
        "best_pdf_total_wall_s": min(r["pdf_total_wall_s"] for r in runs),
    }
    if args.kaleido:
        out["figure_export"] = _kaleido_ratio(ref, bgm)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
