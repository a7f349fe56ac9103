"""Storage round-trips on SQLite (save, list, reload, delete) and all-or-nothing saves."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from synthetic_seg import synthetic_risk, write_synthetic_seg

from ranking_core import GaussianKernel, IteratedLavrentiev, Showalter, SpectralRanker
from ranking_core.grids.seg import SEGTableError
from ranking_core.selection import choose, paper_lambda_grid
from ranking_core.storage import (
    DATABASE_URL_ENV,
    RecordNotFound,
    StorageError,
    Store,
    array_from_bytes,
    array_to_bytes,
    default_database_url,
    frame_from_bytes,
    frame_to_bytes,
)


@pytest.fixture
def store(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'db' / 'riskgrid.sqlite3'}")
    yield s
    s.dispose()


@pytest.fixture(scope="module")
def seg_csv(tmp_path_factory):
    return write_synthetic_seg(tmp_path_factory.mktemp("seg") / "RiskPairData.csv")


def _ratings(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ref, est = rng.uniform(20, 580, (2, n))
    return pd.DataFrame({"reference": ref, "estimate": est,
                         "rating": np.round(np.abs(synthetic_risk(ref, est))),
                         "rater": [f"r{i % 3}" for i in range(n)]})


def test_default_url_is_sqlite_in_user_data_dir_or_env():
    assert default_database_url({DATABASE_URL_ENV: "postgresql://u@h/db"}) == "postgresql://u@h/db"
    url = default_database_url({})
    assert url.startswith("sqlite:///") and url.endswith("riskgrid.sqlite3")
    assert "riskgrid" in url.removeprefix("sqlite:///").rsplit("/", 2)[-2]


def test_arrays_and_frames_round_trip_without_pickle():
    values = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    back = array_from_bytes(array_to_bytes(values))
    assert back.dtype == np.float64 and np.array_equal(back, values)
    frame = _ratings(7)
    assert_frame_equal_loose(frame_from_bytes(frame_to_bytes(frame)), frame)
    with pytest.raises(StorageError, match="dtype object"):
        array_to_bytes(np.array([{"a": 1}], dtype=object))
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(StorageError, match="not a plain"):
        array_from_bytes(pickled.getvalue())


def assert_frame_equal_loose(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    for c in want.columns:
        if pd.api.types.is_numeric_dtype(want[c]):
            np.testing.assert_array_equal(got[c].to_numpy(), want[c].to_numpy())
        else:
            assert got[c].tolist() == want[c].astype(str).tolist()


def test_rating_set_save_list_reload_delete(store):
    first, second = _ratings(50, 1), _ratings(30, 2)
    store.save_rating_set("panel A", first, {"unit": "mg/dL", "problems": []})
    store.save_rating_set("panel B", second)
    listed = store.list_records("rating_set")
    assert [r.name for r in listed] == ["panel B", "panel A"]  # newest first
    assert listed[1].meta == {"rows": 50, "columns": ["reference", "estimate", "rating", "rater"],
                              "unit": "mg/dL", "problems": []}
    assert_frame_equal_loose(store.load_rating_set("panel A").frame, first)
    store.delete("rating_set", "panel A")
    assert [r.name for r in store.list_records("rating_set")] == ["panel B"]
    with pytest.raises(RecordNotFound, match="no rating set named 'panel A'"):
        store.load_rating_set("panel A")
    with pytest.raises(RecordNotFound):
        store.delete("rating_set", "panel A")
    # kinds are separate name spaces
    store.save_meter_data("panel B", pd.DataFrame({"BGM": [100, 150], "REF": [110, 140]}))
    assert store.load_meter_data("panel B").frame["REF"].tolist() == [110, 140]
    assert len(store.load_rating_set("panel B").frame) == 30


def test_records_survive_a_new_connection(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    Store(url).save_meter_data("m1", pd.DataFrame({"BGM": [1.5], "REF": [2.0]}))
    again = Store(url)
    assert again.load_meter_data("m1").frame["BGM"].tolist() == [1.5]


def test_duplicate_name_is_refused_and_changes_nothing(store):
    original = _ratings(20, 3)
    store.save_rating_set("panel", original)
    with pytest.raises(StorageError, match="already exists"):
        store.save_rating_set("panel", _ratings(40, 4))
    assert len(store.list_records("rating_set")) == 1
    assert_frame_equal_loose(store.load_rating_set("panel").frame, original)
    store.save_rating_set("panel", _ratings(40, 4), replace=True)
    assert len(store.load_rating_set("panel").frame) == 40
    with pytest.raises(StorageError, match="needs a name"):
        store.save_rating_set("   ", original)


def test_failure_mid_transaction_leaves_no_half_record(store, monkeypatch):
    model = SpectralRanker(gamma=1e4).fit(*_xy(40))
    X, y = _xy(40)
    store.save_learned_grid("kept", model, X, y, {"misranking": 0.1})
    import ranking_core.storage as storage

    calls = {"n": 0}
    real = storage.array_to_bytes

    def failing(values):
        calls["n"] += 1
        if calls["n"] == 3:  # record and two blobs already flushed
            raise RuntimeError("disk full")
        return real(values)

    monkeypatch.setattr(storage, "array_to_bytes", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        store.save_learned_grid("broken", model, X, y)
    assert calls["n"] == 3
    # a failing replace does not delete the record it would have replaced
    calls["n"] = 0
    with pytest.raises(RuntimeError, match="disk full"):
        store.save_learned_grid("kept", model, X, y, replace=True)
    monkeypatch.undo()
    assert [r.name for r in store.list_records("learned_grid")] == ["kept"]
    with store.engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("select count(*) from records")).scalar() == 1
        assert conn.execute(text("select count(*) from blobs")).scalar() == 5
    np.testing.assert_array_equal(store.load_learned_grid("kept").coef, model.coef_)


def _xy(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, (m, 2))
    return X, np.abs(synthetic_risk(X[:, 0], X[:, 1]))


def test_learned_grid_round_trip_reproduces_the_model(store):
    X, y = _xy(120, 5)
    ranker = SpectralRanker(gamma=2e4, filter=IteratedLavrentiev(k=3))
    choice = choose(ranker, X, y, rule="holdout", grid=paper_lambda_grid(n=60), refit=False)
    metrics = {"misranking": 0.05, "rule": "holdout", "curve": choice.curve}
    store.save_learned_grid("grid 1", choice.model, X, y, metrics)
    info = store.list_records("learned_grid")[0]
    assert info.meta["m"] == 120 and info.meta["m_fit"] == 60
    assert info.meta["params"]["filter"] == {"class": "ranking_core.filters:IteratedLavrentiev",
                                             "fields": {"k": 3}}
    stored = store.load_learned_grid("grid 1")
    assert not stored.signed
    assert stored.lam == choice.value and stored.intercept == choice.model.intercept_
    np.testing.assert_array_equal(stored.X_train, X)
    np.testing.assert_array_equal(stored.y_fit, y[:60])
    np.testing.assert_array_equal(stored.metrics["curve"], choice.curve)
    again = stored.model()
    probe = np.random.default_rng(9).uniform(0, 600, (50, 2))
    np.testing.assert_allclose(again.predict(probe), choice.model.predict(probe), atol=1e-9)
    assert again.filter_ == IteratedLavrentiev(k=3) and again.lam == choice.value
    store.delete("learned_grid", "grid 1")
    assert store.list_records("learned_grid") == []


def test_kernel_objects_are_stored_as_their_fields_and_only_ranking_core_is_rebuilt(store):
    X, y = _xy(50, 6)
    model = SpectralRanker(kernel=GaussianKernel((8e3, 2e4)), filter="showalter", lam=0.02)
    model.fit(X, y)
    store.save_learned_grid("anisotropic", model, X, y, signed=True)
    assert store.load_learned_grid("anisotropic").signed
    again = store.load_learned_grid("anisotropic").model()
    assert again.kernel_ == GaussianKernel((8e3, 2e4)) and again.filter_ == Showalter()
    np.testing.assert_allclose(again.predict(X), model.predict(X), atol=1e-9)
    from ranking_core.storage import _component_from_json

    with pytest.raises(StorageError, match="not part of ranking_core"):
        _component_from_json({"class": "os:system", "fields": {}})
    with pytest.raises(StorageError, match="not a ranking_core dataclass"):
        _component_from_json({"class": "ranking_core.storage:Store", "fields": {}})


def test_learned_grid_detects_a_changed_record(store):
    X, y = _xy(30)
    store.save_learned_grid("g", SpectralRanker(gamma=1e4, lam=0.01).fit(X, y), X, y)
    stored = store.load_learned_grid("g")
    broken = type(stored)(**{**stored.__dict__, "coef": stored.coef + 1.0})
    with pytest.raises(StorageError, match="other coefficients"):
        broken.model()
    with pytest.raises(StorageError, match="first rows of X_train"):
        store.save_learned_grid("h", SpectralRanker().fit(X, y), X[::-1], y[::-1])


def test_seg_table_path_and_uploaded_copy(store, seg_csv):
    assert store.latest_seg_table() is None
    store.save_seg_table("on disk", path=seg_csv)
    assert store.latest_seg_table().path == str(seg_csv.resolve())
    store.save_seg_table("upload", content=seg_csv.read_bytes(), file_name="RiskPairData.csv")
    latest = store.latest_seg_table()
    assert latest.info.name == "upload" and latest.path is None
    table = latest.load()
    assert table.absolute[100, 300] == pytest.approx(2.0)
    assert table.risk([50], [40], signed=True)[0] == pytest.approx(0.1)


def test_invalid_seg_upload_is_refused_and_changes_nothing(store, seg_csv):
    store.save_seg_table("good", path=seg_csv)
    bad = b"RiskPairID,REF,BGM,RiskFactor,abs_risk\n1,0,0,0,0\n2,0,1,x,0\n"
    with pytest.raises(SEGTableError, match="RiskFactor is not a finite number in line 3"):
        store.save_seg_table("bad", content=bad, file_name="bad.csv")
    assert [r.name for r in store.list_records("seg_table")] == ["good"]
    with pytest.raises(StorageError, match="either path or content"):
        store.save_seg_table("neither")
