"""Passing–Bablok against an implementation nobody here wrote: Roche's method-comparison tool
calanas, whose results for the data set "TD15" (50 pairs, no ties) R package mcr publishes as its
own test expectations (github cran/mcr, inst/unitTests/runit.mcPaBa.R, function
test.mc.paba.call; the data set and calanas's estimates and 95 % limits are quoted there).

* The slope and the intercept equal calanas's to 1e-12: N = 1,225 slopes is odd, so the shifted
  median is one slope in every convention.
* The limits differ, by a convention stated in mcr's code: calanas and mcr take the limits' ranks
  as quantiles "in analogy to the median" (twice the index, round(N − C + 2K), the mean of two
  slopes for an even one), where Passing & Bablok (1983) round M1 = (N − C)/2 and take one slope.
  Ours are the paper's; computed by calanas's rule from the same slopes (brute force below) they
  equal calanas's limits to 1e-12, so the difference is that rule and nothing else.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from ranking_core.meter.comparison.passing_bablok import passing_bablok

X = np.array(
    [
        18.654599109456,
        17.0610823229594,
        37.8076135618173,
        51.1413961380522,
        103.985667589592,
        34.8605133072495,
        35.1146708951621,
        16.005996343635,
        68.5890100912778,
        62.1699013684068,
        18.1641040703209,
        94.2563842860796,
        31.67278631354,
        18.8059773112482,
        67.9347403613216,
        18.260239156489,
        87.1550332248675,
        98.5843421029197,
        20.3747255514258,
        4.20199417418543,
        27.7662087802102,
        16.6797331091928,
        52.3335230459024,
        1.25970439645986,
        2.55285163008995,
        71.1422300479687,
        99.3428902581639,
        40.6747911609727,
        82.5924169862313,
        64.7062991090824,
        1.46968233573658,
        83.5389530283147,
        19.8368624090347,
        44.339918470983,
        19.2879672940529,
        86.5484515948081,
        79.8461255550168,
        66.1164680506251,
        32.8785828616434,
        85.634465208222,
        15.772867025856,
        102.866851788539,
        16.4442973704484,
        23.0916021823352,
        83.3011761592876,
        9.47357732139885,
        15.4574423263928,
        67.0394769874472,
        32.7239965276836,
        71.7361088013058,
    ]
)
Y = np.array(
    [
        15.9116325401596,
        17.9423397346645,
        58.1755698848695,
        49.0779434653576,
        113.758268975683,
        35.5525894416901,
        39.4088027819502,
        15.0167183931276,
        65.8450151148211,
        62.6667874119841,
        15.8020862675435,
        83.9418317622942,
        33.5524291118479,
        18.5775089262923,
        73.872592767028,
        21.600509295785,
        93.4269960011703,
        89.8278248717022,
        20.130360709819,
        4.94910345310486,
        23.1566064984898,
        17.336339530418,
        56.2280624424048,
        1.70969794990576,
        3.40128933880261,
        87.5197563754811,
        67.3466761237754,
        35.6882873995953,
        90.4041198524321,
        62.2603160684644,
        1.52718831259026,
        84.5412183739216,
        19.0003036715583,
        51.0624306952549,
        12.0291575952956,
        55.3970074896586,
        96.7628055558332,
        69.6940969840453,
        29.1380990869214,
        85.4597993067675,
        18.1508502210932,
        92.1385811560549,
        17.012175857013,
        23.0242126162252,
        95.7510267835212,
        8.70125548126123,
        13.4955271740672,
        45.8284262464427,
        31.1175741976669,
        69.5490311988868,
    ]
)
# calanas's results as mcr's test quotes them: intercept, slope and their 95 % limits
CALANAS = {
    "intercept": -0.639752984809869,
    "slope": 1.02058852149448,
    "intercept_lower": -2.3330808182894,
    "intercept_upper": 0.840973102642057,
    "slope_lower": 0.95848878631593,
    "slope_upper": 1.09232009780764,
}


def test_the_estimates_equal_calanas():
    fit = passing_bablok(X, Y)
    assert fit.slopes == 1225 and fit.n == 50
    assert fit.slope == pytest.approx(CALANAS["slope"], rel=1e-12)
    assert fit.intercept == pytest.approx(CALANAS["intercept"], rel=1e-12)


def _calanas_limits() -> tuple[float, float, float, float]:
    """calanas's limits by its own rule (as mcr's mc.paba computes them), from every pairwise
    slope written out here: twice-indexed quantiles of the sorted slopes, shifted by 2K."""
    slopes = sorted(
        (Y[i] - Y[j]) / (X[i] - X[j]) for i in range(X.size) for j in range(i + 1, X.size)
    )
    n_slopes, k = len(slopes), sum(s < -1 for s in slopes)
    conf = norm.ppf(0.975) * math.sqrt(X.size * (X.size - 1) * (2 * X.size + 5) / 18)

    def quantile(twice: int) -> float:
        half = (twice + 1) // 2
        return slopes[half - 1] if twice % 2 else (slopes[half - 1] + slopes[half]) / 2

    lower = quantile(round(n_slopes - conf + 2 * k))
    upper = quantile(round(n_slopes + conf + 2 * k))
    a_low = float(np.median(Y - upper * X))
    a_high = float(np.median(Y - lower * X))
    return lower, upper, a_low, a_high


def test_the_limits_differ_from_calanas_only_by_its_quantile_rule():
    lower, upper, a_low, a_high = _calanas_limits()
    assert (lower, upper, a_low, a_high) == pytest.approx(
        (
            CALANAS["slope_lower"],
            CALANAS["slope_upper"],
            CALANAS["intercept_lower"],
            CALANAS["intercept_upper"],
        ),
        rel=1e-12,
    )
    fit = passing_bablok(X, Y)  # the paper's ranks: one slope on each side, further out here
    assert fit.slope_lower < lower < fit.slope < upper < fit.slope_upper
