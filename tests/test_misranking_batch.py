"""The batched misranking used by validation curves equals the one-row metric, row by row."""

from __future__ import annotations

import numpy as np
import pytest

from ranking_core import metrics
from ranking_core.metrics import pairwise_misranking, pairwise_misranking_batch


def test_batch_equals_row_by_row_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=70).astype(float)  # many ties in y
    scores = np.round(rng.normal(size=(9, 70)), 1)  # ties in the scores count as errors
    scores[3] = y  # a perfect row
    expected = [pairwise_misranking(y, row) for row in scores]
    np.testing.assert_allclose(pairwise_misranking_batch(y, scores), expected, atol=1e-12)
    assert pairwise_misranking_batch(y, scores)[3] == 0.0


def test_blocks_and_fallback_agree(monkeypatch):
    rng = np.random.default_rng(1)
    y = rng.normal(size=40)
    scores = rng.normal(size=(7, 40))
    expected = [pairwise_misranking(y, row) for row in scores]
    monkeypatch.setattr(metrics, "_BATCH_ENTRIES", 800)  # 780 pairs: one row per block
    np.testing.assert_allclose(pairwise_misranking_batch(y, scores), expected, atol=1e-12)
    monkeypatch.setattr(metrics, "_BATCH_ENTRIES", 100)  # fewer than the pairs: fallback
    np.testing.assert_allclose(pairwise_misranking_batch(y, scores), expected, atol=1e-12)


def test_constant_truth_and_bad_shapes():
    assert np.all(np.isnan(pairwise_misranking_batch(np.ones(5), np.zeros((2, 5)))))
    with pytest.raises(ValueError, match="columns"):
        pairwise_misranking_batch(np.arange(4.0), np.zeros((2, 5)))
