"""The files of an elicited grid (``riskgrid elicit --out-dir DIR``), as bytes by name.

======================  ==========================================================================
``grid.npy``            (601, 601) float64, the pooled grid (mean of the scenario grids), rows =
                        reference 0..600 mg/dL, columns = measured 0..600 mg/dL, risk 0..4: the
                        layout of ``riskgrid learn``'s grid (:mod:`ranking_core.grids.files`)
``scenario-*.npy``      one per scenario (:func:`scenario_files`; the table in grid.json)
``spread.npy``          standard deviation (ddof 0) of the risk over every rater map
``count.npy``           (601, 601) int64, the number of rater maps behind each cell
``grid.png``            the pooled grid in the SEG colours
``RiskPairData.csv``    the pooled grid in the official SEG table's format (:func:`seg_table_csv`)
``grid.json``           raters, scenarios, exclusions with reasons and lines, the definitions,
                        sha256 of the inputs and of every other output, riskgrid's version
======================  ==========================================================================
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import unicodedata

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ranking_core.elicit.answers import Answers
from ranking_core.elicit.mapping import SIZE, ElicitedGrids
from ranking_core.grids.files import grid_npy, grid_png
from ranking_core.grids.seg import SEG_COLUMNS
from ranking_core.version import riskgrid_version

__all__ = [
    "ELICITED_KIND",
    "elicited_files",
    "elicited_metadata",
    "scenario_files",
    "seg_table_csv",
    "sha256_of",
]

ELICITED_KIND = "elicited grid"  # grid.json "kind": how meter-report tells it from a learned one
SLUG_CHARS = 40


def sha256_of(data: bytes) -> str:
    """``sha256:<hex>`` of the bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _slug(name: str) -> str:
    ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:SLUG_CHARS].strip("-")


def scenario_files(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Scenario name → file name ``scenario-<slug>.npy``: lower-case ASCII letters and digits,
    other characters as ``-``, at most 40 characters; a name with no such character, or whose
    slug an earlier scenario took, gets its position (``scenario-3.npy``, ``fasting-2``)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for position, name in enumerate(names, start=1):
        slug = _slug(name) or str(position)
        candidate, k = slug, 2
        while candidate in taken:
            candidate, k = f"{slug}-{k}", k + 1
        taken.add(candidate)
        out[name] = f"scenario-{candidate}.npy"
    return out


def seg_table_csv(grid: ArrayLike) -> bytes:
    """A (601, 601) ``[REF, BGM]`` risk grid as the official SEG table ``RiskPairData.csv``.

    Columns ``RiskPairID, REF, BGM, RiskFactor, abs_risk``; rows in the official order, BGM
    varying slowest and REF fastest (RiskPairID 1 is (0, 0), 2 is (1, 0), …, 361,201 is
    (600, 600)); ``abs_risk`` the risk 0..4, ``RiskFactor`` = sign(REF − BGM)·abs_risk, the SEG's
    sign convention (positive where the meter reads too low, negative where it reads too high,
    :mod:`ranking_core.grids.seg`). Values with 12 significant digits (the official file has 5);
    :func:`ranking_core.grids.seg.load_seg_table` reads it back."""
    risk = np.asarray(grid, dtype=np.float64)
    if risk.shape != (SIZE, SIZE):
        raise ValueError(f"a risk grid has shape ({SIZE}, {SIZE}); got {risk.shape}")
    axis = np.arange(SIZE)
    ref = np.tile(axis, SIZE)  # REF fastest
    bgm = np.repeat(axis, SIZE)
    absolute = risk[ref, bgm]
    signed = np.sign(ref - bgm) * absolute + 0.0  # + 0.0: no "-0"
    frame = pd.DataFrame(
        dict(
            zip(
                SEG_COLUMNS,
                (np.arange(1, SIZE * SIZE + 1), ref, bgm, signed, absolute),
                strict=True,
            )
        )
    )
    return frame.to_csv(index=False, float_format="%.12g", lineterminator="\n").encode()


def _npy(values: NDArray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, values, allow_pickle=False)
    return buffer.getvalue()


def elicited_metadata(
    answers: Answers,
    grids: ElicitedGrids,
    files: dict[str, str],
    inputs: dict[str, dict[str, str]],
    outputs: dict[str, str],
) -> dict:
    """``grid.json``: the layout, the mapping and its averages, raters, scenarios (with their
    files), exclusions, refused rows of no rater × scenario, checksums and riskgrid's version."""
    return {
        "kind": ELICITED_KIND,
        "format": {
            "shape": [SIZE, SIZE],
            "rows": "reference glucose 0..600 mg/dL, step 1",
            "columns": "measured glucose 0..600 mg/dL, step 1",
            "values": "risk 0..4 (SEG scale)",
        },
        "method": (
            "SEG method (Klonoff et al. 2014): per rater and scenario, risk(REF, BGM) = "
            "(score[measured = action(BGM), actual = action(REF)] - 1) / 2, action(g) the "
            "action whose range holds g (A: 0..max_A, B: max_A+1..max_B, C, D, E: "
            "max_D+1..600 mg/dL); a scenario's grid is the mean over its raters, grid.npy the "
            "mean of the scenario grids"
        ),
        "spread": {
            "file": "spread.npy",
            "definition": "standard deviation of the risk over every rater x scenario map",
            "ddof": 0,
        },
        "count": {"file": "count.npy", "definition": "rater x scenario maps behind each cell"},
        "raters": list(answers.raters),
        "maps": grids.n_maps,
        "scenarios": [
            {"name": name, "file": files[name], "raters": len(grids.raters[name])}
            for name in grids.scenarios
        ],
        "exclusions": [e.to_dict() for e in answers.exclusions],
        "notes": list(answers.messages),
        "inputs": inputs,
        "outputs": outputs,
        "riskgrid_version": riskgrid_version(),
    }


def elicited_files(
    answers: Answers, grids: ElicitedGrids, inputs: dict[str, tuple[str, bytes]]
) -> dict[str, bytes]:
    """Every file of the module table by name, ``grid.json`` last (it holds the others'
    sha256); ``inputs`` maps each input's role (thresholds, matrix) to its file name and
    bytes, for their checksums."""
    names = scenario_files(list(grids.scenarios))
    out = {
        "grid.npy": grid_npy(grids.pooled),
        **{names[name]: grid_npy(grid) for name, grid in grids.scenarios.items()},
        "spread.npy": _npy(grids.spread),
        "count.npy": _npy(grids.count),
        "grid.png": grid_png(grids.pooled, "Elicited risk grid (SEG method)"),
        "RiskPairData.csv": seg_table_csv(grids.pooled),
    }
    meta = elicited_metadata(
        answers,
        grids,
        names,
        {
            role: {"file": os.path.basename(name), "sha256": sha256_of(data)}
            for role, (name, data) in inputs.items()
        },
        {k: sha256_of(v) for k, v in out.items()},
    )
    out["grid.json"] = json.dumps(meta, indent=2).encode()
    return out
