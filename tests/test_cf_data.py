"""Readers of every CF format, built as small files here, and the synthetic generator."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ranking_core import cf

TRIPLES = [(1, 10, 5), (1, 20, 3), (2, 10, 1), (3, 30, 4), (2, 30, 2)]


def dense(data: cf.RatingMatrix) -> dict[tuple[int, int], float]:
    """{(user id, item id): rating} straight from the CSR structure (explicit zeros kept)."""
    coo = data.ratings.tocoo()
    return {
        (int(data.user_ids[r]), int(data.item_ids[c])): float(v)
        for r, c, v in zip(coo.row, coo.col, coo.data, strict=True)
    }


def expected() -> dict[tuple[int, int], float]:
    return {(u, i): float(r) for u, i, r in TRIPLES}


def test_movielens_100k_reads_tab_separated_lines(tmp_path: Path) -> None:
    path = tmp_path / "u.data"
    path.write_text("".join(f"{u}\t{i}\t{r}\t88125094{k}\n" for k, (u, i, r) in enumerate(TRIPLES)))
    data = cf.read_movielens_100k(tmp_path)  # a directory holding u.data works too
    assert dense(data) == expected()
    assert data.n_users == 3 and data.n_items == 3 and data.n_ratings == 5
    assert list(data.counts()) == [2, 2, 1]
    assert list(data.users_in(2, 2)) == [0, 1]


@pytest.mark.parametrize("timestamp", [True, False])
def test_movielens_1m_reads_with_and_without_timestamp(tmp_path: Path, timestamp: bool) -> None:
    path = tmp_path / "ratings.dat"
    tail = "::978300760" if timestamp else ""
    path.write_text("".join(f"{u}::{i}::{r}{tail}\n" for u, i, r in TRIPLES))
    assert dense(cf.read_ratings(path, "ml-1m")) == expected()


def test_jester_long_with_header_keeps_zero_ratings(tmp_path: Path) -> None:
    path = tmp_path / "jester.csv"
    path.write_text("user_id,joke_id,rating\n1,5,0.0\n1,7,-9.5\n2,5,8.25\n")
    data = cf.read_jester_long(path)
    assert dense(data) == {(1, 5): 0.0, (1, 7): -9.5, (2, 5): 8.25}
    assert data.scale == (-10.0, 10.0)


def jester_rows() -> np.ndarray:
    rows = np.array([[3, 1.5, 99, -2.0, 0.0], [1, 99, 99, 9.9, 99], [2, -10, 10, 99, 99]])
    return rows


def expected_jester() -> dict[tuple[int, int], float]:
    return {(1, 1): 1.5, (1, 3): -2.0, (1, 4): 0.0, (2, 3): 9.9, (3, 1): -10.0, (3, 2): 10.0}


def test_jester_wide_csv(tmp_path: Path) -> None:
    path = tmp_path / "jester-data-1.csv"
    path.write_text("\n".join(",".join(f"{v:g}" for v in row) for row in jester_rows()) + "\n")
    assert dense(cf.read_jester(path)) == expected_jester()


def test_jester_wide_xlsx(tmp_path: Path) -> None:
    path = tmp_path / "jester-data-1.xlsx"
    pd.DataFrame(jester_rows()).to_excel(path, header=False, index=False)
    assert dense(cf.read_ratings(path, "jester")) == expected_jester()


@pytest.mark.parametrize(
    ("name", "text", "read", "error", "warning", "expected"),
    [
        pytest.param(
            "u.data",
            "1\t10\t5\t0\n\n1\t20\n2\t10\tx\t0\n2\t20\t7\t0\n",
            cf.read_movielens_100k,
            r"line 3 break the rule: 3 or 4 fields",
            r"line 3 .*line 4 .*numbers.*line 5 .*1\.\.5",
            {(1, 10): 5.0},
            id="movielens-100k",
        ),
        pytest.param(
            "jester.csv",
            "2,1.0,99,3.0\n2,1.0,99,99\n1,11.0,99,99\n1,abc,99,99\n",
            cf.read_jester,
            r"line 4 break the rule: 4 numeric cells",
            r"line 3 .*-10\.\.10.*line 2 .*column 1",
            {(1, 1): 1.0, (1, 3): 3.0},
            id="jester-wrong-count-and-out-of-scale",
        ),
    ],
)
def test_malformed_lines_are_named(
    tmp_path: Path, name: str, text: str, read, error: str, warning: str, expected: dict
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=error):
        read(path)
    with pytest.warns(UserWarning, match=warning):
        data = read(path, errors="skip")
    assert dense(data) == expected


def test_repeated_rating_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "ratings.dat"
    path.write_text("1::10::5\n2::10::4\n1::10::3\n")
    with pytest.raises(ValueError, match=r"lines 1 and 3"):
        cf.read_movielens_1m(path)


def test_empty_missing_and_unknown_format(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="empty"):
        cf.read_jester_long(empty)
    with pytest.raises(FileNotFoundError, match="no such file"):
        cf.read_movielens_1m(tmp_path / "nothing.dat")
    with pytest.raises(ValueError, match="format must be one of"):
        cf.read_ratings(empty, "netflix")


def test_synthetic_ratings_look_like_movielens() -> None:
    data = cf.synthetic_ratings(n_users=300, n_items=500, seed=3)
    counts = data.counts()
    stars = np.bincount(data.ratings.data.astype(int), minlength=6)[1:] / data.n_ratings
    assert counts.min() >= 20 and 45 <= np.median(counts) <= 90
    assert set(np.unique(data.ratings.data)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    # the quantile cut reproduces MovieLens' star shares
    np.testing.assert_allclose(stars, [0.061, 0.114, 0.272, 0.341, 0.212], atol=0.01)
    # popular items: the top 10 % of items hold far more than 10 % of the ratings
    per_item = np.sort(np.bincount(data.ratings.indices, minlength=data.n_items))[::-1]
    assert per_item[: data.n_items // 10].sum() > 0.25 * data.n_ratings
    again = cf.synthetic_ratings(n_users=300, n_items=500, seed=3)
    assert (again.ratings != data.ratings).nnz == 0


def test_synthetic_ratings_have_low_rank_structure() -> None:
    """Users' ratings are predictable from other users': the mean rating of an item by others
    correlates with a user's rating far above zero."""
    data = cf.synthetic_ratings(n_users=300, n_items=300, seed=1)
    full = data.ratings.toarray()
    rated = full > 0
    item_mean = full.sum(axis=0) / np.maximum(rated.sum(axis=0), 1)
    r = np.corrcoef(full[rated], np.broadcast_to(item_mean, full.shape)[rated])[0, 1]
    assert r > 0.3


def test_real_movielens_100k() -> None:
    root = os.environ.get("MOVIELENS_100K")
    if not root:
        pytest.skip("MOVIELENS_100K is not set (path to the ml-100k directory)")
    data = cf.read_movielens_100k(root)
    assert (data.n_users, data.n_items, data.n_ratings) == (943, 1682, 100_000)
    assert data.counts().min() == 20
    assert len(data.users_in(50, 300)) == 515


def test_real_jester_dataset_1() -> None:
    """Jester dataset 1 as published: 24,983 users who rated 36 or more of the 100 jokes. The
    groups of the per-user protocol are checked against a count read with pandas from the file's
    first column (the number of jokes each user rated)."""
    root = os.environ.get("JESTER")
    if not root:
        pytest.skip("JESTER is not set (path to the folder holding jester-data-1.csv)")
    path = Path(root) / "jester-data-1.csv"
    if not path.exists():
        pytest.skip(f"JESTER holds no jester-data-1.csv ({root})")
    data = cf.read_jester(path)
    assert (data.n_users, data.n_items) == (24_983, 100)
    assert data.counts().min() == 36
    counts = pd.read_csv(path, header=None, usecols=[0])[0].to_numpy()
    assert data.n_ratings == counts.sum()
    for low, high in ((20, 40), (40, 60), (60, 80), (50, 300)):
        assert len(data.users_in(low, high)) == ((counts >= low) & (counts <= high)).sum()


def test_uploads_are_read_through_the_input_layer() -> None:
    content = b"1\t10\t5\t0\n1\t20\t3\t0\n"
    assert dense(cf.read_ratings(content, "ml-100k", name="u.data")) == {(1, 10): 5.0, (1, 20): 3.0}
    long = io.BytesIO(b"user_id,joke_id,rating\n1,5,-2.5\n")
    assert dense(cf.read_ratings(long, "jester-long", name="j.csv")) == {(1, 5): -2.5}
    with pytest.raises(ValueError, match=r"Windows-1252.*accepted: UTF-8"):
        cf.read_ratings(
            "1::10::5\n2::10::4\n".encode("cp1252") + b"3::1\xe9::4\n", "ml-1m", name="ratings.dat"
        )
    with pytest.raises(ValueError, match=r"legacy Excel \.xls format is not accepted"):
        cf.read_ratings(b"\xd0\xcf\x11\xe0", "jester", name="jester-data-1.xls")
