"""Write docs/STANDARDS.md from the registry of acceptance standards
(:data:`ranking_core.meter.standards.registry.STANDARDS`) and the bound methods
(:data:`ranking_core.meter.standards.bound_methods.BOUNDS`): every criterion with its quoted text,
paragraph, threshold and verdict rule. ``--check`` exits 1 when the committed file differs.

    python scripts/standards_doc.py            # writes docs/STANDARDS.md
    python scripts/standards_doc.py --check    # CI: is it current?
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ranking_core.meter.standards import plan_simulation  # noqa: E402
from ranking_core.meter.standards.bounds import BOUNDS, default_bound  # noqa: E402
from ranking_core.meter.standards.registry import DEFAULT_STANDARD, DEVICES, RULES, STANDARDS  # noqa: E402
from ranking_core.meter.standards.study_plan import PLAN_BOUNDS, SIMULATIONS  # noqa: E402

OUT = ROOT / "docs" / "STANDARDS.md"

INTRO = """# Acceptance standards

What `riskgrid meter-report` judges pairs by, generated from the registry
(`ranking_core/meter/standards/registry.py`) by `python scripts/standards_doc.py`; a test checks
that this file is current. How the numbers compare with other implementations on public data is in
[CONFORMANCE.md](CONFORMANCE.md).

**Choosing.** `--device bgm|cgm` picks the default standard ({defaults}); the device is `cgm`
when the file has sensor times or a `sensor` column, else `bgm`. `--profile NAME[,NAME]` (or `all`)
names the standards instead. The Meter page has the same two choices. Only the standards chosen
appear on the page, in the JSON (`standards`, `acceptance`) and in the reports;
`--fail-on-verdict` makes the exit status 3 when a judged criterion fails.

**Values** are judged as measured (the SEG tool's tables round to whole mg/dL; the criteria do
not). "Within ±x mg/dL" and "within ±x %" include the boundary: |BGM − REF| ≤ x and
100·|BGM − REF| ≤ x·REF.

**Measuring range.** A standard with one judges only the pairs whose device reading lies inside
it, boundaries included, and says how many it left out (JSON `measuring_range_low`,
`measuring_range_high`, `pairs_outside_range` in every row). `--measuring-range LOW-HIGH` sets
one range for every chosen standard, `--measuring-range none` judges every pair.

**Lower bounds** (`--bound`; default `kg` when the file has a `sensor` or `subject` column, else
`cp`). Clusters come from the `sensor`, else the `subject` column; a blank cell refuses its row by
line. With too few clusters for a method the output says so; a CGM standard judged without
clusters gets a one-line warning in every output. `--by COLUMN` judges every standard again for
each group (population, site, lot).

| `--bound` | method | reference |
| --- | --- | --- |
{bounds}

**Rates of change** (iCGM J and K) come from consecutive pairs of one sensor (reference-time
order) whose reference times and sensor times each advance by more than 0 and at most `--rate-gap`
minutes (default 30); the sensor's rate from its own values and times, the reference's from its
own. Pairs without a rate are counted by reason in the notes. J and K report the
sensor-conditional share first (`count`, `n`, `percent`: among pairs whose sensor rate is beyond
±1 mg/dL/min, as FDA labelling's concurrence tables read it) and the reference-conditional share
beside it (`reference_count`, `reference_n`, `reference_percent`). The 5 × 5 table of rate
categories is in the JSON under `trend_agreement`.

**CG-EGA** (continuous glucose-error grid analysis, Kovatchev et al., Diabetes Care
2004;27:1922–1928) is computed from the same rates (its own definition: the change between
consecutive readings over the time between them) for pairs with both times and is in the JSON
under `cg_ega` (point and rate zone counts; accurate readings, benign errors and erroneous
readings by glycaemic state: reference ≤ 70, > 70 to ≤ 180, > 180 mg/dL) and in the PDF and HTML
reports. Its borders and its error matrix, with their sources and the two places where the
published description and the open reference implementation (github dotXem/CG-EGA) differ, are
in `ranking_core/meter/cgm/cg_ega.py`; the reference implementation's example is the optional
conformance vector `cg-ega`.

**DTS Trend Accuracy Matrix** (Klonoff DC et al., J Diabetes Sci Technol 2024;18(6):1346–1361):
not computed. Its published abstract names five trend risk categories (1–5) for CGM trend
indicators against reference trends, but the matrix itself (the rate categories and the risk of
each cell) was not available to us: searches of documentation, code and stored web pages found
only the abstract, so nothing of it is implemented.
"""


PLANNING = """## Planning a study (`riskgrid plan-study`, the Meter page's "Plan a study")

The probability that a device passes the criteria named in `--agreement`, each and all together,
for `--sensors` S × `--pairs-per-sensor` M, and with `--target` the fewest sensors that reach it.
**Bound**: `--bound` ({bounds}); without it the rule `meter-report` judges by:
`{clustered}` with an intra-class correlation (`--icc`) above 0, `{independent}` at 0, named in
the output and the JSON (`bound`, `bound_default`). Clopper–Pearson with an ICC above 0 warns:
it ignores the clustering. The Meter page's planner starts from the report above it: the
agreement observed in each criterion, the report's intra-class correlation (the acceptance
table's `icc` column, the ANOVA estimate of each criterion's counted pairs within the sensors,
weighted by pairs) and the bound the report judged by. Exact where a closed form exists (a
criterion alone at ICC 0 judged on its count: cp or an observed share; all of them at ICC 0 when
no two count the same pairs: the product), else simulated jointly as below (seeded, {studies:,}
studies). How fast it runs: [SCALE.md](SCALE.md).

{model}
"""


def _planning() -> str:
    model = (plan_simulation.__doc__ or "").strip()
    model = model.replace("The joint model", "**The joint model**", 1)
    return PLANNING.format(
        bounds=", ".join(PLAN_BOUNDS),
        clustered=default_bound(True),
        independent=default_bound(False),
        model=model,
        studies=SIMULATIONS,
    )


def _standard(name: str) -> str:
    s = STANDARDS[name]
    span = (
        f"{s.measuring_range[0]:g}–{s.measuring_range[1]:g} mg/dL by the device's reading"
        if s.measuring_range
        else "none (every pair)"
    )
    lines = [
        f"## {s.title} (`{s.name}`)",
        "",
        f"For a {DEVICES[s.device]}. {s.citation}. Measuring range: {span}.",
        "",
        "| criterion | what is counted | required | verdict | paragraph | text |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in s.criteria:
        text = c.text.replace("|", "\\|")
        lines.append(
            f"| {c.id} | {c.label} | {c.required_percent:g} % | {RULES[c.rule]} | {c.paragraph} "
            f"| {text} |"
        )
        if c.companion is not None:
            lines.append(f"| | beside it: {c.companion[1]} (JSON `{c.companion[0]}_…`) | | | | |")
    if s.checked:
        lines += ["", f"Checked: {s.checked}."]
    return "\n".join(lines)


def document() -> str:
    defaults = ", ".join(f"{d}: {STANDARDS[n].title}" for d, n in DEFAULT_STANDARD.items())
    bounds = "\n".join(f"| `{k}` | {m.label} | {m.citation} |" for k, m in BOUNDS.items())
    parts = [INTRO.format(defaults=defaults, bounds=bounds)]
    parts += [_standard(name) for name in STANDARDS]
    parts.append(_planning())
    return "\n\n".join(p.strip() for p in parts) + "\n"


def main(argv: list[str]) -> int:
    text = document()
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python scripts/standards_doc.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
