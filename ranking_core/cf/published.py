"""The papers' published per-user results (fractions), to print beside measured ones.

Keys: (data set, group) → learner → (mean, sd). ``misranking`` is pairwise misranking (Kriukova et
al. 2014 eq. (1) = Cortes et al. 2007, eq. (69)); ``msd`` and ``m1d`` are Cortes et al. 2007, eqs.
(67)–(68). Kriukova et al.'s "Algorithm (3) as in [2]" is MPRank (= Lavrentiev), "SLR [2]" and
"RankBoost [2]" are Cortes et al.'s.
"""

from __future__ import annotations

__all__ = ["CORTES_2007_TABLE1", "KRIUKOVA_2014_TABLE2"]

# Kriukova et al. 2014, Table 2: pairwise misranking
KRIUKOVA_2014_TABLE2 = {
    ("movielens", "20-40"): {"iterated-lavrentiev": (0.4175, 0.005)},
    ("movielens", "40-60"): {
        "iterated-lavrentiev": (0.398, 0.005),
        "lavrentiev": (0.471, 0.005),
        "slr": (0.511, 0.011),
        "rankboost": (0.476, 0.007),
    },
    ("movielens", "60-80"): {
        "iterated-lavrentiev": (0.385, 0.005),
        "lavrentiev": (0.442, 0.005),
        "slr": (0.484, 0.013),
        "rankboost": (0.463, 0.011),
    },
    ("jester", "20-40"): {
        "iterated-lavrentiev": (0.393, 0.007),
        "lavrentiev": (0.410, 0.006),
        "slr": (0.429, 0.007),
        "rankboost": (0.479, 0.008),
    },
    ("jester", "40-60"): {
        "iterated-lavrentiev": (0.367, 0.007),
        "lavrentiev": (0.408, 0.006),
        "slr": (0.420, 0.006),
        "rankboost": (0.432, 0.005),
    },
    ("jester", "60-80"): {
        "iterated-lavrentiev": (0.355, 0.006),
        "lavrentiev": (0.371, 0.006),
        "slr": (0.385, 0.006),
        "rankboost": (0.417, 0.008),
    },
}

# Cortes et al. 2007, Table 1: MSD and M1D of MPRank (= lavrentiev) and RankBoost (SVRank not
# implemented)
CORTES_2007_TABLE1 = {
    ("movielens", "20-40"): {
        "msd": {"lavrentiev": (2.01, 0.02), "rankboost": (12.88, 2.15)},
        "m1d": {"lavrentiev": (1.04, 0.05), "rankboost": (2.59, 0.04)},
    },
    ("movielens", "40-60"): {
        "msd": {"lavrentiev": (2.02, 0.06), "rankboost": (20.06, 2.76)},
        "m1d": {"lavrentiev": (1.04, 0.02), "rankboost": (2.99, 0.12)},
    },
    ("movielens", "60-80"): {
        "msd": {"lavrentiev": (2.07, 0.05), "rankboost": (21.35, 2.71)},
        "m1d": {"lavrentiev": (1.06, 0.01), "rankboost": (3.82, 0.23)},
    },
    ("jester", "20-40"): {
        "msd": {"lavrentiev": (51.34, 2.90), "rankboost": (77.08, 17.1)},
        "m1d": {"lavrentiev": (5.08, 0.15), "rankboost": (5.97, 0.16)},
    },
    ("jester", "40-60"): {
        "msd": {"lavrentiev": (46.77, 2.03), "rankboost": (80.00, 18.2)},
        "m1d": {"lavrentiev": (4.98, 0.13), "rankboost": (6.18, 0.11)},
    },
    ("jester", "60-80"): {
        "msd": {"lavrentiev": (49.33, 3.11), "rankboost": (88.61, 18.6)},
        "m1d": {"lavrentiev": (4.88, 0.14), "rankboost": (6.46, 0.20)},
    },
}
