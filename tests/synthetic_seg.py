"""A made-up SEG-format table for tests (same columns and lattice; NOT the official risks).

Risk = min(4, |BGM − REF| / 100), signed negative where BGM > REF, so tests can predict any value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def synthetic_risk(ref: np.ndarray, bgm: np.ndarray) -> np.ndarray:
    """The made-up signed risk RiskFactor(REF, BGM)."""
    return -np.sign(bgm - ref) * np.minimum(4.0, np.abs(bgm - ref) / 100.0)


def write_synthetic_seg(path: Path) -> Path:
    """Write the made-up table as RiskPairData-style CSV (gzip if the name ends in .gz)."""
    ref, bgm = np.meshgrid(np.arange(601), np.arange(601), indexing="ij")
    ref, bgm = ref.ravel(), bgm.ravel()
    factor = synthetic_risk(ref, bgm)
    pd.DataFrame(
        {
            "RiskPairID": np.arange(1, ref.size + 1),
            "REF": ref,
            "BGM": bgm,
            "RiskFactor": factor,
            "abs_risk": np.abs(factor),
        }
    ).to_csv(path, index=False)
    return path
