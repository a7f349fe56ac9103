"""Rating sets the command-line tests write: continuous ratings of a known smooth risk."""

from __future__ import annotations

import numpy as np
import pandas as pd


def continuous_ratings(m: int = 60, seed: int = 0) -> pd.DataFrame:
    """``m`` (reference, estimate) pairs uniform on 20..580 mg/dL rated 3·|log(ref/est)|
    clipped to 0..4 (columns reference, estimate, rating)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(20, 580, (m, 2))
    return pd.DataFrame(
        {
            "reference": X[:, 0],
            "estimate": X[:, 1],
            "rating": np.clip(np.abs(np.log(X[:, 0] / X[:, 1])) * 3, 0, 4),
        }
    )
