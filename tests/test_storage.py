"""Storage on SQLite and PostgreSQL: round-trips (save, list, reload, rename, delete),
all-or-nothing saves, checks before storing, records that never name code, schema migrations."""

from __future__ import annotations

import importlib
import io
import json
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError
from synthetic_seg import synthetic_risk, write_synthetic_seg

from ranking_core import GaussianKernel, IteratedLavrentiev, Showalter, SpectralRanker
from ranking_core.grids.seg import SEGTableError
from ranking_core.selection import choose, paper_lambda_grid
from ranking_core.storage import (
    DATABASE_URL_ENV,
    METADATA,
    RecordNotFound,
    StorageError,
    Store,
    array_from_bytes,
    array_to_bytes,
    check_grid,
    default_database_url,
    frame_from_bytes,
    frame_to_bytes,
)


@pytest.fixture
def store(database_url):
    s = Store(database_url)
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


def test_failure_mid_transaction_leaves_no_half_record(store):
    model = SpectralRanker(gamma=1e4).fit(*_xy(40))
    X, y = _xy(40)
    store.save_learned_grid("kept", model, X, y, {"misranking": 0.1})
    blob_inserts = {"n": 0}

    def fail_on_blobs(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO BLOBS"):
            blob_inserts["n"] += 1  # the record row is already written in this transaction
            raise OperationalError(statement, parameters, Exception("disk full"))

    event.listen(store.engine, "before_cursor_execute", fail_on_blobs)
    try:
        with pytest.raises(StorageError, match="disk full"):
            store.save_learned_grid("broken", model, X, y)
        # a failing replace does not delete the record it would have replaced
        with pytest.raises(StorageError, match="disk full"):
            store.save_learned_grid("kept", model, X, y, replace=True)
    finally:
        event.remove(store.engine, "before_cursor_execute", fail_on_blobs)
    assert blob_inserts["n"] == 2
    assert [r.name for r in store.list_records("learned_grid")] == ["kept"]
    with store.engine.connect() as conn:
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
    assert info.meta["params"]["filter"] == {"class": "IteratedLavrentiev", "fields": {"k": 3}}
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


# -- checks before anything is stored -----------------------------------------------------------
@pytest.mark.parametrize("name", ["a\x00b", "line\nbreak", "tab\there", "bell\x07",
                                  "right-to-left \u202e override", "zero\u200bwidth", "x" * 201])
def test_names_must_be_printable_text_and_are_refused_with_a_message(store, name):
    frame = _ratings(10)
    with pytest.raises(StorageError, match=r"printable text|1\.\.200 characters"):
        store.save_rating_set(name, frame)
    with pytest.raises(StorageError, match=r"printable text|1\.\.200 characters"):
        store.load_rating_set(name)
    store.save_rating_set("fine", frame)
    with pytest.raises(StorageError, match=r"printable text|1\.\.200 characters"):
        store.rename("rating_set", "fine", name)
    assert [r.name for r in store.list_records("rating_set")] == ["fine"]


def test_unicode_names_with_quotes_and_markup_are_kept_verbatim(store):
    name = "Glukose-Panel «ü» 'x'; DROP TABLE records; -- ![i](http://e.invalid/x.png) <b>"
    store.save_rating_set(name, _ratings(10))
    assert store.list_records("rating_set")[0].name == name
    assert len(store.load_rating_set(name).frame) == 10


def test_ratings_are_checked_before_they_are_stored(store):
    bad = _ratings(10)
    bad.loc[3, "rating"] = 7.0
    bad.loc[5, "reference"] = np.inf
    with pytest.raises(StorageError,
                       match=r"not finite .* in row 5; rating is outside 0\.\.4 in row 3"):
        store.save_rating_set("bad", bad)
    with pytest.raises(StorageError, match="missing column"):
        store.save_rating_set("bad", bad.drop(columns="rating"))
    with pytest.raises(StorageError, match="BGM is not a number"):
        store.save_meter_data("m", pd.DataFrame({"BGM": ["x", "100"], "REF": [90, 95]}))
    assert store.list_records("rating_set") == [] and store.list_records("meter_data") == []


def test_a_grid_far_off_the_risk_scale_is_refused(store):
    X, y = _xy(50, 1)
    y = np.round(y)
    wild = SpectralRanker(gamma=2e4, lam=1e-12).fit(X, y)  # interpolates the noise: |f| ≫ 4
    with pytest.raises(StorageError, match="far off the risk scale"):
        store.save_learned_grid("wild", wild, X, y)
    assert store.list_records("learned_grid") == []
    with pytest.raises(StorageError, match=r"ratings must lie in 0\.\.4"):
        store.save_learned_grid("g", SpectralRanker(lam=0.1).fit(X, y + 5), X, y + 5)


def test_check_grid_rules():
    check_grid(np.full((601, 601), 2.0))
    check_grid(np.full((601, 601), -4.5), signed=True)  # signed: −4..4 and the margin
    with pytest.raises(StorageError, match="601 × 601"):
        check_grid(np.zeros((600, 601)))
    grid = np.zeros((601, 601))
    grid[7, 9] = np.nan
    with pytest.raises(StorageError, match="1 grid values are not finite"):
        check_grid(grid)
    with pytest.raises(StorageError, match=r"far off the risk scale 0\.\.4"):
        check_grid(np.full((601, 601), -1.5))
    with pytest.raises(StorageError, match="far off"):
        check_grid(np.full((601, 601), 1e284))


# -- records never name code --------------------------------------------------------------------
TAMPERED_CLASSES = ["ranking_core.cli.__main__:app", "os:system", "ranking_core.storage:Store",
                    "ranking_core.cli.__main__:SpectralRanker", "builtins:eval", "Store",
                    "subprocess.Popen"]


def _tamper(store, name: str, where: str, value) -> None:
    """Rewrite one entry of a stored learned grid's metadata behind the store's back."""
    with store.engine.begin() as conn:
        meta = conn.execute(text("select meta from records where name = :n"), {"n": name}).scalar()
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if where == "estimator":
            meta["estimator"] = value
        else:
            meta["params"][where] = {"class": value, "fields": {}}
        conn.execute(text("update records set meta = :m where name = :n"),
                     {"m": json.dumps(meta), "n": name})


@pytest.mark.parametrize("where", ["filter", "kernel", "estimator"])
def test_a_tampered_record_cannot_make_the_loader_import_anything(store, where, monkeypatch):
    X, y = _xy(30, 2)
    store.save_learned_grid("g", SpectralRanker(gamma=1e4, lam=0.05).fit(X, y), X, y)
    store.load_learned_grid("g").model()  # anything a genuine load needs is imported now
    imported = []
    monkeypatch.setattr(importlib, "import_module", lambda *a, **k: imported.append(a))
    for value in TAMPERED_CLASSES:
        _tamper(store, "g", where, value)
        modules = set(sys.modules)
        with pytest.raises(StorageError, match=r"not allowed|not one of riskgrid's own"):
            store.load_learned_grid("g").model()
        assert imported == [] and set(sys.modules) == modules, value


def test_a_tampered_record_leaves_no_module_loaded_in_a_fresh_interpreter(tmp_path):
    """End to end in a new process: load a record naming ``ranking_core.cli.__main__`` (the module
    an earlier version imported and ran) and check the module was never imported."""
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    store = Store(url)
    X, y = _xy(30, 3)
    store.save_learned_grid("g", SpectralRanker(gamma=1e4, lam=0.05).fit(X, y), X, y)
    _tamper(store, "g", "filter", "ranking_core.cli.__main__:main")
    store.dispose()
    script = (
        "import sys\n"
        "from ranking_core.storage import Store, StorageError\n"
        f"store = Store({url!r})\n"
        "try:\n"
        "    store.load_learned_grid('g').model()\n"
        "except StorageError as exc:\n"
        "    print('refused:', exc)\n"
        "print(sorted(m for m in sys.modules if m.startswith('ranking_core.cli')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, check=True)
    assert "refused: stored class 'ranking_core.cli.__main__:main' is not allowed" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_records_of_earlier_versions_name_classes_by_path_and_still_load(store):
    X, y = _xy(40, 4)
    model = SpectralRanker(gamma=2e4, filter=IteratedLavrentiev(k=3), lam=0.02).fit(X, y)
    store.save_learned_grid("old", model, X, y)
    _tamper(store, "old", "filter", "ranking_core.filters:IteratedLavrentiev")
    with store.engine.begin() as conn:  # fields back: k = 3
        meta = json.loads(conn.execute(text("select meta from records")).scalar()) \
            if store.dialect == "sqlite" else conn.execute(text("select meta from records")) \
            .scalar()
        meta["params"]["filter"]["fields"] = {"k": 3}
        del meta["estimator"]
        conn.execute(text("update records set meta = :m"), {"m": json.dumps(meta)})
    again = store.load_learned_grid("old").model()
    assert again.filter_ == IteratedLavrentiev(k=3)
    np.testing.assert_allclose(again.predict(X), model.predict(X), atol=1e-9)


# -- rename, delete, who saved it ---------------------------------------------------------------
def test_rename_keeps_the_content_and_refuses_a_taken_name(store):
    first, second = _ratings(20, 7), _ratings(25, 8)
    store.save_rating_set("one", first, saved_by="ada@example.org")
    store.save_rating_set("two", second)
    with pytest.raises(StorageError, match="named 'two' already exists"):
        store.rename("rating_set", "one", "two")
    with pytest.raises(RecordNotFound):
        store.rename("rating_set", "none", "three")
    info = store.rename("rating_set", "one", "  three ")
    assert info.name == "three" and info.saved_by == "ada@example.org"
    assert_frame_equal_loose(store.load_rating_set("three").frame, first)
    assert_frame_equal_loose(store.load_rating_set("two").frame, second)
    assert sorted(r.name for r in store.list_records("rating_set")) == ["three", "two"]
    assert {r.name: r.saved_by for r in store.list_records("rating_set")} == {
        "three": "ada@example.org", "two": None}


def test_database_failures_are_storage_errors_with_a_message(tmp_path):
    with pytest.raises(StorageError, match="failed in the database: connection failed"):
        Store("postgresql+psycopg://nobody@127.0.0.1:1/none")
    folder = tmp_path / "ro"
    store = Store(f"sqlite:///{folder / 'db.sqlite3'}")
    with store.engine.begin() as conn:
        conn.execute(text("drop table blobs"))
    with pytest.raises(StorageError, match="failed in the database: no such table: blobs"):
        store.save_rating_set("x", _ratings(5))
    with pytest.raises(StorageError, match="failed in the database"):
        store.load_rating_set("x")


# -- schema migrations --------------------------------------------------------------------------
FIRST_RELEASE_SCHEMA = [
    "CREATE TABLE records (id INTEGER NOT NULL PRIMARY KEY, kind VARCHAR(32) NOT NULL, "
    "name VARCHAR(200) NOT NULL, created_at DATETIME NOT NULL, meta JSON NOT NULL, "
    "CONSTRAINT uq_records_kind_name UNIQUE (kind, name))",
    "CREATE TABLE blobs (id INTEGER NOT NULL PRIMARY KEY, record_id INTEGER NOT NULL, "
    "key VARCHAR(64) NOT NULL, content BLOB NOT NULL, "
    "CONSTRAINT uq_blobs_record_key UNIQUE (record_id, key), "
    "FOREIGN KEY(record_id) REFERENCES records (id) ON DELETE CASCADE)",
]


def test_a_database_from_before_migrations_is_upgraded_and_keeps_its_records(tmp_path):
    path = tmp_path / "old.sqlite3"
    frame = _ratings(12, 9)
    with sqlite3.connect(path) as conn:
        for statement in FIRST_RELEASE_SCHEMA:
            conn.execute(statement)
        conn.execute("insert into records values (1, 'rating_set', 'kept', "
                     "'2025-01-02 03:04:05', ?)", (json.dumps({"rows": 12}),))
        conn.execute("insert into blobs values (1, 1, 'frame', ?)", (frame_to_bytes(frame),))
    store = Store(f"sqlite:///{path}")
    (info,) = store.list_records("rating_set")
    assert info.name == "kept" and info.saved_by is None and info.meta == {"rows": 12}
    assert_frame_equal_loose(store.load_rating_set("kept").frame, frame)
    store.save_rating_set("new", frame, saved_by="bo")
    assert store.list_records("rating_set")[0].saved_by == "bo"
    with store.engine.connect() as conn:
        assert conn.execute(text("select version_num from alembic_version")).scalar() == \
            "saved_by"


def test_the_migrations_build_exactly_the_schema_the_code_uses(store):
    """Alembic's own comparison of the migrated database with the table definitions in
    ranking_core.storage finds no difference (a column added without a migration fails here)."""
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, METADATA) == []
        assert context.get_current_revision() == "saved_by"


def test_a_replaced_record_has_a_new_version_even_if_it_gets_its_old_id_back(store):
    first = store.save_rating_set("panel", _ratings(10, 1))
    second = store.save_rating_set("panel", _ratings(12, 2), replace=True)
    listed = store.list_records("rating_set")[0]
    assert listed.version == second.version != first.version
    assert len(store.load_rating_set("panel").frame) == 12
