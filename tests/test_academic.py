"""Kriukova et al. 2014, §4.1 reproduction against a hand-written version of the protocol; the CLI's
JSON."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ranking_core import SpectralRanker, SpectralRegressor
from ranking_core.cli import app
from ranking_core.experiments.academic import run_academic
from ranking_core.metrics import pairwise_misranking


def by_hand(m: int, repeats: int, seed: int, refit: bool) -> dict[str, list[float]]:
    """The protocol written out with separate fits per λ (no path, no shared helpers)."""
    rng = np.random.default_rng(seed)
    lams = 0.95 ** np.arange(200)
    out: dict[str, list[float]] = {"ranking": [], "slr": []}
    for _ in range(repeats):
        while True:
            x = rng.choice(np.arange(1, 101), size=m, replace=False).astype(float)
            y = np.floor(x / 10)
            if np.ptp(y[: m // 2]) > 0 and np.ptp(y[m // 2 :]) > 0:
                break
        X = x[:, None]
        x_test = rng.integers(0, 101, size=100).astype(float)[:, None]
        y_test = np.floor(x_test[:, 0] / 10)
        for name, cls in (("ranking", SpectralRanker), ("slr", SpectralRegressor)):
            half = m // 2
            errors = [
                pairwise_misranking(
                    y[half:], cls(gamma=100.0, lam=lam).fit(X[:half], y[:half]).predict(X[half:])
                )
                for lam in lams
            ]
            lam = lams[int(np.argmin(errors))]
            model = cls(gamma=100.0, lam=lam).fit(
                X if refit else X[:half], y if refit else y[:half]
            )
            out[name].append(pairwise_misranking(y_test, model.predict(x_test)))
    return out


@pytest.mark.parametrize("protocol", ["refit", "split"])
def test_run_academic_matches_the_protocol_by_hand(protocol: str) -> None:
    result = run_academic(sizes=(12,), repeats=3, seed=5, protocol=protocol)
    expected = by_hand(12, 3, 5, refit=protocol == "refit")
    got = result["sizes"]["12"]
    for name in ("ranking", "slr"):
        np.testing.assert_allclose(got[name]["misranking"], expected[name], atol=1e-12)
    gain = np.subtract(expected["slr"], expected["ranking"])
    assert got["slr_minus_ranking"]["mean"] == pytest.approx(gain.mean())
    assert got["slr_minus_ranking"]["standard_error"] == pytest.approx(
        gain.std(ddof=1) / np.sqrt(3)
    )


def test_cli_writes_json(tmp_path) -> None:
    out = tmp_path / "academic.json"
    result = CliRunner().invoke(
        app, ["reproduce", "academic", "--m", "12", "--reps", "2", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["protocol"] == "refit" and set(data["sizes"]) == {"12"}
    assert "8.16" in result.output  # the paper's number is printed beside ours


def test_cli_refuses_an_unknown_protocol() -> None:
    result = CliRunner().invoke(
        app, ["reproduce", "academic", "--m", "12", "--reps", "2", "--protocol", "half"]
    )
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code != 0 and "refit, split" in text
