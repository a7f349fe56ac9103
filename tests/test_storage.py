"""Storage on SQLite and PostgreSQL: round-trips (save, list, reload, rename, delete),
all-or-nothing saves, checks before storing, records that never name code, schema migrations."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import sqlite3
import zipfile
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from synthetic_seg import synthetic_risk, write_synthetic_seg

from ranking_core import GaussianKernel, IteratedLavrentiev, SpectralRanker, SpectralRegressor
from ranking_core.grids.learned import learned_grid
from ranking_core.grids.signed import AbsoluteRisk
from ranking_core.learn import LearnSettings, grid_metadata, learn_grid
from ranking_core.panels import simulate_panel
from ranking_core.ratings import read_rating_set
from ranking_core.storage import (
    BLOBS,
    DATABASE_URL_ENV,
    METADATA,
    MIGRATIONS,
    RECORDS,
    SCHEMA_REVISION,
    RecordNotFound,
    StorageError,
    Store,
    array_from_bytes,
    array_to_bytes,
    check_grid,
    default_database_url,
    display_name,
    frame_from_bytes,
    frame_to_bytes,
    json_bool,
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
    return pd.DataFrame(
        {
            "reference": ref,
            "estimate": est,
            "rating": np.round(np.abs(synthetic_risk(ref, est))),
            "rater": [f"r{i % 3}" for i in range(n)],
        }
    )


def _xy(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 600, (m, 2))
    return X, np.abs(synthetic_risk(X[:, 0], X[:, 1]))


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
    assert listed[1].meta == {
        "rows": 50,
        "columns": ["reference", "estimate", "rating", "rater"],
        "unit": "mg/dL",
        "problems": [],
    }
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


@pytest.fixture(scope="module")
def robust_monotone():
    """A grid made by robust learning and the monotone step (neither can be rebuilt from a
    ranker), with its grid.json metadata."""
    result = learn_grid(
        read_rating_set(simulate_panel(80, random_state=0)),
        LearnSettings(robust="huber", monotone=True),
    )
    return result.grid, grid_metadata(result, "panel.csv")


def test_failure_mid_transaction_leaves_no_half_record(store, robust_monotone):
    grid, metadata = robust_monotone
    store.save_learned_grid("kept", grid, metadata, {"misranking": 0.1})
    blob_inserts = {"n": 0}

    def fail_on_blobs(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO BLOBS"):
            blob_inserts["n"] += 1  # the record row is already written in this transaction
            raise OperationalError(statement, parameters, Exception("disk full"))

    event.listen(store.engine, "before_cursor_execute", fail_on_blobs)
    try:
        with pytest.raises(StorageError, match="disk full"):
            store.save_learned_grid("broken", grid, metadata)
        # a failing replace does not delete the record it would have replaced
        with pytest.raises(StorageError, match="disk full"):
            store.save_learned_grid("kept", grid + 0.1, metadata, replace=True)
    finally:
        event.remove(store.engine, "before_cursor_execute", fail_on_blobs)
    assert blob_inserts["n"] == 2
    assert [r.name for r in store.list_records("learned_grid")] == ["kept"]
    with store.engine.connect() as conn:
        assert conn.execute(text("select count(*) from records")).scalar() == 1
        assert conn.execute(text("select count(*) from blobs")).scalar() == 1
    np.testing.assert_array_equal(store.load_learned_grid("kept").grid, grid)


def test_a_robust_monotone_grid_loads_back_as_it_was_shown(store, robust_monotone):
    grid, metadata = robust_monotone
    assert metadata["settings"]["robust"] == "huber" and metadata["settings"]["monotone"]
    store.save_learned_grid(
        "robust monotone", grid, metadata, {"misranking": 0.04}, saved_by="ada@example.org"
    )
    stored = store.load_learned_grid("robust monotone")
    assert stored.grid.shape == (601, 601) and stored.grid.dtype == np.float64
    np.testing.assert_allclose(stored.grid, grid, rtol=0, atol=1e-12)
    assert stored.metadata == json.loads(json.dumps(metadata))  # grid.json as written
    assert stored.settings == metadata["settings"] and stored.lam == metadata["lambda"]
    assert stored.checksum == metadata["ratings_checksum"].strip()
    assert stored.riskgrid_version == metadata["riskgrid_version"]
    assert stored.metrics == {"misranking": 0.04}
    (info,) = store.list_records("learned_grid")
    assert info.meta["m"] == metadata["ratings"] and info.saved_by == "ada@example.org"


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"settings": None}, "'settings' as an object"),
        ({"lambda": True}, "'lambda' as a number"),
        ({"lambda": "0.1"}, "'lambda' as a number"),
        ({"lambda": float("nan")}, "finite number > 0"),
        ({"ratings_checksum": 5}, "'ratings_checksum' as text"),
        ({"riskgrid_version": None}, "'riskgrid_version' as text"),
    ],
)
def test_a_grid_without_its_settings_lambda_checksum_or_version_is_refused(
    store, robust_monotone, change, rule
):
    grid, metadata = robust_monotone
    with pytest.raises(StorageError, match=rule):
        store.save_learned_grid("g", grid, {**metadata, **change})
    assert store.list_records("learned_grid") == []


def test_seg_table_is_stored_as_its_checked_bytes(store, seg_csv):
    assert store.latest_seg_table() is None
    content = seg_csv.read_bytes()
    store.save_seg_table("upload", content, "RiskPairData.csv")
    latest = store.latest_seg_table()
    assert latest.info.name == "upload" and latest.content == content
    table = latest.load()
    assert table.absolute[100, 300] == pytest.approx(2.0)
    assert table.risk([50], [40], signed=True)[0] == pytest.approx(0.1)
    packed = gzip.compress(content)
    with pytest.raises(StorageError, match="a SEG table is in use"):  # one table in use
        store.save_seg_table("packed", packed, "RiskPairData.csv.gz")
    store.save_seg_table("packed", packed, "RiskPairData.csv.gz", replace=True)
    assert [r.name for r in store.list_records("seg_table")] == ["packed"]
    assert np.array_equal(store.load_seg_table_record("packed").load().absolute, table.absolute)
    with pytest.raises(TypeError):  # no way to name a server path any more
        store.save_seg_table("on disk", path=seg_csv)


def test_invalid_or_oversized_seg_uploads_are_refused_and_change_nothing(store, seg_csv):
    store.save_seg_table("good", seg_csv.read_bytes(), "RiskPairData.csv")
    bad = b"RiskPairID,REF,BGM,RiskFactor,abs_risk\n1,0,0,0,0\n2,0,1,x,0\n"
    with pytest.raises(StorageError, match="RiskFactor is not a finite number in line 3"):
        store.save_seg_table("bad", bad, "bad.csv")
    bomb = gzip.compress(b"RiskPairID,REF,BGM,RiskFactor,abs_risk\n" + b" " * (65 * 2**20))
    assert len(bomb) < 2**20
    with pytest.raises(StorageError, match="expands to more than 67,108,864 bytes"):
        store.save_seg_table("bomb", bomb, "RiskPairData.csv.gz")
    with pytest.raises(StorageError, match="at most 67,108,864 bytes"):
        store.save_seg_table("huge", b"0" * (64 * 2**20 + 1), "RiskPairData.csv")
    with pytest.raises(StorageError, match="cannot be unpacked"):
        store.save_seg_table("not gzip", b"plain text", "RiskPairData.csv.gz")
    assert [r.name for r in store.list_records("seg_table")] == ["good"]


def test_a_tampered_seg_table_record_is_a_storage_error(store, seg_csv):
    store.save_seg_table("t", seg_csv.read_bytes(), "RiskPairData.csv")
    with store.engine.begin() as conn:
        conn.execute(text("update blobs set content = :c"), {"c": b"RiskPairID,REF\n1,2\n"})
    with pytest.raises(StorageError, match="missing column"):
        store.load_seg_table_record("t").load()


# -- checks before anything is stored -----------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "a\x00b",
        "line\nbreak",
        "tab\there",
        "bell\x07",
        "right-to-left \u202e override",
        "zero\u200bwidth",
        "x" * 201,
    ],
)
def test_names_must_be_printable_text_and_are_refused_with_a_message(store, name):
    frame = _ratings(10)
    with pytest.raises(StorageError, match=r"printable text|1\.\.200 characters"):
        store.save_rating_set(name, frame)
    if len(name) <= 200:  # looked up as given: not found, said without the raw characters
        with pytest.raises(RecordNotFound, match=r"no rating set named '.*\\"):
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
    with pytest.raises(
        StorageError, match=r"not finite .* in row 5; rating is outside 0\.\.4 in row 3"
    ):
        store.save_rating_set("bad", bad)
    with pytest.raises(StorageError, match="missing column"):
        store.save_rating_set("bad", bad.drop(columns="rating"))
    with pytest.raises(StorageError, match="BGM is not a number"):
        store.save_meter_data("m", pd.DataFrame({"BGM": ["x", "100"], "REF": [90, 95]}))
    assert store.list_records("rating_set") == [] and store.list_records("meter_data") == []


def test_a_grid_far_off_the_risk_scale_is_refused(store, robust_monotone):
    grid, metadata = robust_monotone
    with pytest.raises(StorageError, match="far off the risk scale"):
        store.save_learned_grid("wild", grid * 10, metadata)
    with pytest.raises(StorageError, match="601 × 601"):
        store.save_learned_grid("small", grid[:600], metadata)
    assert store.list_records("learned_grid") == []


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


# -- damaged and tampered records ---------------------------------------------------------------
def _set_blob(store, name: str, key: str, content: bytes) -> None:
    with store.engine.begin() as conn:
        record = conn.execute(text("select id from records where name = :n"), {"n": name}).scalar()
        conn.execute(
            text("update blobs set content = :c where record_id = :r and key = :k"),
            {"c": content, "r": record, "k": key},
        )


def _npy_declaring(shape: tuple[int, ...], payload: bytes = b"\0" * 64) -> bytes:
    """A .npy header declaring ``shape`` of float64, followed by ``payload`` only."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": shape}
    )
    return header.getvalue() + payload


@pytest.mark.parametrize("shape", [(10**12,), (601, 601), (10**6, 10**6), (2**62, 2**62)])
def test_an_absurd_declared_shape_is_a_storage_error_not_a_memory_error(
    store, robust_monotone, shape
):
    grid, metadata = robust_monotone
    store.save_learned_grid("g", grid, metadata)
    _set_blob(store, "g", "grid", _npy_declaring(shape))
    with pytest.raises(StorageError, match=r"declares shape .* holds 64 bytes; it is damaged"):
        store.load_learned_grid("g")
    store.save_rating_set("r", _ratings(10))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("__columns__.npy", array_to_bytes(np.array(["reference"])))
        z.writestr("c0.npy", _npy_declaring(shape))
    _set_blob(store, "r", "frame", archive.getvalue())
    with pytest.raises(StorageError, match="it is damaged"):
        store.load_rating_set("r")


def test_a_tampered_grid_or_summary_is_a_storage_error(store, robust_monotone):
    grid, metadata = robust_monotone
    store.save_learned_grid("g", grid, metadata)
    _set_blob(store, "g", "grid", array_to_bytes(grid.astype(np.float32)))
    with pytest.raises(StorageError, match="dtype float32"):
        store.load_learned_grid("g")
    _set_blob(store, "g", "grid", array_to_bytes(np.full((601, 601), np.inf)))
    with pytest.raises(StorageError, match="not finite"):
        store.load_learned_grid("g")
    _set_blob(store, "g", "grid", b"\x93NUMPY garbage")
    with pytest.raises(StorageError, match="not a plain"):
        store.load_learned_grid("g")
    _set_blob(store, "g", "grid", array_to_bytes(grid))
    with store.engine.begin() as conn:
        conn.execute(
            text("update records set meta = :m"),
            {"m": json.dumps({"metadata": {**metadata, "lambda": "false"}})},
        )
    with pytest.raises(StorageError, match="'lambda' as a number"):
        store.load_learned_grid("g")


def test_stored_booleans_are_strict_json(store):
    assert json_bool({"signed": True}, "signed", False, "r") is True
    assert json_bool({}, "signed", False, "r") is False
    for value in ("false", "true", 0, 1, None, "no"):
        with pytest.raises(StorageError, match="must be true or false"):
            json_bool({"signed": value}, "signed", False, "record 'x'")


# -- records of earlier versions ------------------------------------------------------------------
EARLIER = Path(__file__).with_name("data") / "records_saved_by.sqlite3"


@contextmanager
def _database_at_revision(url: str, revision: str):
    """A connection (in one transaction) to the database at ``url``, its schema upgraded to the
    Alembic ``revision`` only."""
    database = make_url(url).database
    if url.startswith("sqlite") and database:
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
            yield conn
    finally:
        engine.dispose()


def _head_revision() -> str:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


def _earlier_records(url: str, tmp_path, signed_as: object = True) -> None:
    """The records in ``tests/data/records_saved_by.sqlite3`` (saved by the previous version of
    riskgrid, schema revision saved_by, whose ``save_learned_grid`` stored spectral rankers: three
    rankers, one with its filter's class changed to ``os:system``, a rating set) copied into a
    database at ``url`` at that revision; ``signed_as`` replaces the stored "signed": true."""
    copy = tmp_path / "earlier.sqlite3"
    shutil.copy(EARLIER, copy)
    with sqlite3.connect(copy) as old:
        records = old.execute(
            "select id, kind, name, created_at, meta, saved_by from records order by id"
        ).fetchall()
        blobs = old.execute("select record_id, key, content from blobs order by id").fetchall()
    with _database_at_revision(url, "saved_by") as conn:
        for id_, kind, name, created, meta, saved_by in records:
            meta = json.loads(meta)
            if meta.get("signed") is True:
                meta["signed"] = signed_as
            conn.execute(
                RECORDS.insert().values(
                    id=id_,
                    kind=kind,
                    name=name,
                    saved_by=saved_by,
                    meta=meta,
                    created_at=datetime.fromisoformat(created).replace(tzinfo=UTC),
                )
            )
        for record_id, key, content in blobs:
            conn.execute(BLOBS.insert().values(record_id=record_id, key=key, content=content))


def _grid_as_shown_by_the_earlier_version(m: int, seed: int, model, signed: bool = False):
    """The grid the previous version showed for a record of ``records_saved_by.sqlite3``: that
    version saved these rankers fitted on ``_xy(m, seed)`` (signed ratings for the signed one);
    here they are fitted again directly, independently of storage and the migration."""
    X, y = _xy(m, seed)
    if signed:
        y = np.sign(X[:, 0] - X[:, 1]) * y
    model.fit(X, y)
    return learned_grid(AbsoluteRisk(model) if signed else model)


def test_records_saved_by_the_previous_version_load_as_grids(database_url, tmp_path):
    _earlier_records(database_url, tmp_path)
    store = Store(database_url)
    with pytest.raises(StorageError, match=r"older schema .* run `riskgrid db upgrade`"):
        store.list_records("learned_grid")  # a read never upgrades (nor waits for a lock)
    assert store.upgrade() == "outdated" and store.upgrade() == "current"
    names = {r.name: r for r in store.list_records("learned_grid")}
    assert set(names) == {"plain ranker", "signed gaussian", "regressor", "tampered"}
    assert names["plain ranker"].saved_by == "ada@example.org"
    expected = {
        "plain ranker": _grid_as_shown_by_the_earlier_version(
            60, 1, SpectralRanker(gamma=2e4, filter=IteratedLavrentiev(k=3), lam=0.02)
        ),
        "signed gaussian": _grid_as_shown_by_the_earlier_version(
            50,
            2,
            SpectralRanker(kernel=GaussianKernel((8e3, 2e4)), filter="showalter", lam=0.02),
            signed=True,
        ),
        "regressor": _grid_as_shown_by_the_earlier_version(
            40, 3, SpectralRegressor(gamma=1e4, lam=0.05)
        ),
    }
    for name, grid in expected.items():
        stored = store.load_learned_grid(name)
        np.testing.assert_allclose(stored.grid, grid, rtol=0, atol=1e-9)
        assert (
            stored.checksum.startswith("sha256:") and "earlier version" in stored.riskgrid_version
        )
    assert store.load_learned_grid("plain ranker").lam == 0.02
    assert store.load_learned_grid("regressor").metadata["ratings"] == 40
    with pytest.raises(
        StorageError,
        match=r"saved by an earlier version and cannot be read: .*"
        r"'os:system' is not one of riskgrid's own classes",
    ):
        store.load_learned_grid("tampered")
    store.delete("learned_grid", "tampered")  # and it can be deleted
    assert len(store.load_rating_set("ratings").frame) == 30
    with store.engine.connect() as conn:
        assert (
            conn.execute(text("select version_num from alembic_version")).scalar()
            == _head_revision()
        )
    store.dispose()
    Store(database_url).dispose()  # opening it again changes nothing


def test_an_earlier_record_whose_signed_flag_is_text_is_damaged_not_read_as_true(
    database_url, tmp_path
):
    _earlier_records(database_url, tmp_path, signed_as="false")
    store = Store(database_url)
    store.upgrade()
    with pytest.raises(StorageError, match="'signed' must be true or false, not 'false'"):
        store.load_learned_grid("signed gaussian")
    assert store.load_learned_grid("plain ranker").grid.shape == (601, 601)


def test_an_earlier_seg_table_record_naming_a_server_path_is_never_opened(
    database_url, tmp_path, monkeypatch
):
    with _database_at_revision(database_url, "saved_by") as conn:
        conn.execute(
            RECORDS.insert().values(
                id=1,
                kind="seg_table",
                name="environ",
                created_at=datetime.now(UTC),
                meta={"path": "/proc/self/environ", "file_name": "environ", "bytes": None},
            )
        )
    opened = []
    real_open = Path.open
    monkeypatch.setattr(
        Path, "open", lambda self, *a, **k: opened.append(self) or real_open(self, *a, **k)
    )
    store = Store(database_url)
    store.upgrade()
    with pytest.raises(StorageError, match=r"names a file on the server .* never opened"):
        store.latest_seg_table()
    assert not any("environ" in str(p) for p in opened)
    store.delete("seg_table", "environ")
    assert store.list_records("seg_table") == []


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
        "three": "ada@example.org",
        "two": None,
    }


def test_database_failures_are_storage_errors_with_a_message(tmp_path):
    with pytest.raises(StorageError, match="failed in the database: connection failed"):
        Store("postgresql+psycopg://nobody@127.0.0.1:1/none").list_records("rating_set")
    folder = tmp_path / "ro"
    store = Store(f"sqlite:///{folder / 'db.sqlite3'}")
    store.upgrade()
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
        conn.execute(
            "insert into records values (1, 'rating_set', 'kept', '2025-01-02 03:04:05', ?)",
            (json.dumps({"rows": 12}),),
        )
        conn.execute("insert into blobs values (1, 1, 'frame', ?)", (frame_to_bytes(frame),))
    store = Store(f"sqlite:///{path}")
    with pytest.raises(StorageError, match=r"older schema .* run `riskgrid db upgrade`"):
        store.list_records("rating_set")
    store.save_rating_set("new", frame, saved_by="bo")  # the first write upgrades it
    info = store.list_records("rating_set")[1]
    assert info.name == "kept" and info.saved_by is None and info.meta == {"rows": 12}
    assert_frame_equal_loose(store.load_rating_set("kept").frame, frame)
    assert store.list_records("rating_set")[0].saved_by == "bo"
    with store.engine.connect() as conn:
        assert (
            conn.execute(text("select version_num from alembic_version")).scalar()
            == _head_revision()
        )


def test_the_migrations_build_exactly_the_schema_the_code_uses(store):
    """Alembic's own comparison of the migrated database with the table definitions in
    ranking_core.storage finds no difference (a column added without a migration fails here);
    the store knows the newest revision without reading the migration scripts."""
    import ranking_core.surveys.tables  # noqa: F401 - the survey tables join METADATA

    assert store.upgrade() == "empty" and SCHEMA_REVISION == _head_revision()
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, METADATA) == []
        assert context.get_current_revision() == _head_revision()


def test_a_replaced_record_has_a_new_version_even_if_it_gets_its_old_id_back(store):
    first = store.save_rating_set("panel", _ratings(10, 1))
    second = store.save_rating_set("panel", _ratings(12, 2), replace=True)
    listed = store.list_records("rating_set")[0]
    assert listed.version == second.version != first.version
    assert len(store.load_rating_set("panel").frame) == 12


# -- owners and names saved by earlier versions ---------------------------------------------------
def test_a_signed_in_user_changes_only_their_own_records(store):
    store.save_rating_set("ada's", _ratings(10, 1), saved_by="ada@example.org")
    store.save_rating_set("unowned", _ratings(10, 2))
    for name in ("ada's", "unowned"):
        with pytest.raises(StorageError, match=r"cannot delete .* only the one who saved it"):
            store.delete("rating_set", name, by="bo@example.org")
        with pytest.raises(StorageError, match=r"cannot rename .* only the one who saved it"):
            store.rename("rating_set", name, "taken over", by="bo@example.org")
        with pytest.raises(StorageError, match=r"cannot replace .* only the one who saved it"):
            store.save_rating_set(name, _ratings(5, 3), replace=True, saved_by="bo@example.org")
    assert {
        r.name: len(store.load_rating_set(r.name).frame) for r in store.list_records("rating_set")
    } == {"ada's": 10, "unowned": 10}
    store.rename("rating_set", "ada's", "ada's panel", by="ada@example.org")
    store.save_rating_set("ada's panel", _ratings(7, 4), replace=True, saved_by="ada@example.org")
    store.delete("rating_set", "ada's panel", by="ada@example.org")
    store.delete("rating_set", "unowned")  # without a login (by=None) nothing is checked
    assert store.list_records("rating_set") == []


@pytest.mark.parametrize(
    "bad", ["two\nlines", "esc \x1b[31m red", "bidi \u202e", "tab\there ", " padded "]
)
def test_a_name_saved_by_an_earlier_version_can_still_be_renamed_and_deleted(store, bad):
    store.save_rating_set("ok", _ratings(10, 5))
    with store.engine.begin() as conn:
        conn.execute(text("update records set name = :n"), {"n": bad})
    (info,) = store.list_records("rating_set")
    assert info.name == bad
    assert display_name(bad).isprintable() and "\n" not in display_name(bad)
    assert len(store.load_rating_set(bad).frame) == 10
    store.rename("rating_set", bad, "fixed")
    assert [r.name for r in store.list_records("rating_set")] == ["fixed"]
    with store.engine.begin() as conn:
        conn.execute(text("update records set name = :n"), {"n": bad})
    store.delete("rating_set", bad)
    assert store.list_records("rating_set") == []


def test_display_name_escapes_what_is_not_printable():
    assert display_name("a\nb\x1b[0m\u202e") == "a\\nb\\x1b[0m\\u202e"
    assert display_name("Glukose «ü» <b>") == "Glukose «ü» <b>"


def test_a_database_that_cannot_be_opened_is_a_storage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError, match="opening the database failed"):
        Store(f"sqlite:///{blocker / 'sub' / 'db.sqlite3'}")
    with pytest.raises(StorageError, match="names a nosuchdriver database; riskgrid keeps"):
        Store("nosuchdriver://x/y")
    newer = tmp_path / "newer.sqlite3"
    Store(f"sqlite:///{newer}").upgrade()
    with sqlite3.connect(newer) as conn:
        conn.execute("update alembic_version set version_num = 'from_the_future'")
    for use in (lambda s: s.list_records("rating_set"), Store.upgrade):
        with pytest.raises(StorageError, match="made by a newer riskgrid"):
            use(Store(f"sqlite:///{newer}"))


def test_the_stored_grid_size_is_the_seg_lattice():
    """storage names the lattice size without importing the grid modules; it is theirs."""
    from ranking_core.grids.seg import GLUCOSE_MAX
    from ranking_core.storage import GRID_SIZE

    assert GRID_SIZE == GLUCOSE_MAX + 1
