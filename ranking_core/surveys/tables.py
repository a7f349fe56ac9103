"""The survey tables of the records database (created by the Alembic revisions ``surveys``,
``survey_owner`` and ``seg_method``) and what the survey store returns: a survey, a rater's
access, a queue place; the checks of instructions and pairs before they are stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, overload

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from ranking_core.storage import METADATA, NAME_MAX, SAVED_BY_MAX, StorageError
from ranking_core.storage.schema import parent_key
from ranking_core.surveys.design import SurveySettings

if TYPE_CHECKING:
    import pandas as pd

INSTRUCTIONS_MAX = 20_000  # characters
HASH_LENGTH = 64  # hex SHA-256
# a queue place with its answer as the survey store returns it (SurveyStore.answer_rows, in
# order; the columns of SurveyStore.answers)
ANSWER_COLUMNS = (
    "rater",
    "revoked",
    "position",
    "batch",
    "role",
    "pair_id",
    "reference",
    "estimate",
    "expected",
    "rating",
    "first_answered_at",
    "answered_at",
)

SURVEYS = Table(
    "surveys",
    METADATA,
    Column("id", Integer, primary_key=True),
    Column("name", String(NAME_MAX), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("closed_at", DateTime(timezone=True), nullable=True),
    Column("organiser_hash", String(HASH_LENGTH), nullable=False),
    Column("settings", JSON, nullable=False),
    Column("instructions", Text, nullable=False),
    Column("batches", Integer, nullable=False),
    Column("owner", String(SAVED_BY_MAX), nullable=True),  # None: the operator
    # how raters answer: "pairs" (rated pairs) or "seg" (the SEG's method, seg_method.py)
    Column("method", String(16), nullable=False, server_default="pairs"),
)
PAIRS = Table(
    "survey_pairs",
    METADATA,
    Column("id", Integer, primary_key=True),
    parent_key("survey_id", "surveys", nullable=False, index=True),
    Column("batch", Integer, nullable=False),
    Column("reference", Float, nullable=False),
    Column("estimate", Float, nullable=False),
    Column("expected", String(16), nullable=True),  # check pairs: "none" or "extreme"
)
RATERS = Table(
    "survey_raters",
    METADATA,
    Column("id", Integer, primary_key=True),
    parent_key("survey_id", "surveys", nullable=False),
    Column("name", String(NAME_MAX), nullable=False),
    Column("token_hash", String(HASH_LENGTH), nullable=False, unique=True),
    Column("invited", Integer, nullable=False),  # 0, 1, … in order of invitation
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    UniqueConstraint("survey_id", "name", name="uq_survey_raters_name"),
)
QUEUE = Table(
    "survey_queue",
    METADATA,
    parent_key("rater_id", "survey_raters", primary_key=True),
    Column("position", Integer, primary_key=True),
    parent_key("pair_id", "survey_pairs", nullable=False),
    Column("role", String(16), nullable=False),
    Column("batch", Integer, nullable=False),
)
ANSWERS = Table(
    "survey_answers",
    METADATA,
    parent_key("rater_id", "survey_raters", primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("rating", Float, nullable=False),
    Column("first_answered_at", DateTime(timezone=True), nullable=False),
    Column("answered_at", DateTime(timezone=True), nullable=False),
)


class SurveyError(StorageError):
    """A survey operation was refused; the message says why in one sentence."""


class InviteInterrupted(SurveyError):
    """An invitation failed after some of its batches were stored: ``links`` holds the (rater,
    link) of the raters invited before the failure (their links are valid and shown once)."""

    def __init__(self, message: str, links: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.links = links


@dataclass(frozen=True)
class Survey:
    """A stored survey (what every page and command reads first)."""

    id: int
    name: str
    settings: SurveySettings
    instructions: str
    created_at: datetime
    closed_at: datetime | None
    batches: int
    owner: str | None = None  # the signed-in user who created it; None: the operator
    method: str = "pairs"  # "pairs", or "seg": scenarios, thresholds and risk matrices

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    def rater_link(self, token: str) -> str:
        return _link(self.settings.base_url, self.name, "token", token)

    def organiser_link(self, token: str) -> str:
        return _link(self.settings.base_url, self.name, "organiser", token)


@dataclass(frozen=True)
class RaterAccess:
    """A rater's open link: the survey and who they are."""

    survey: Survey
    rater_id: int
    rater: str


@dataclass(frozen=True)
class QueueItem:
    """One place in a rater's queue, with the rater's answer if given."""

    position: int
    reference: float
    estimate: float
    role: str
    rating: float | None


def _link(base_url: str, name: str, key: str, token: str) -> str:
    from urllib.parse import urlencode

    return f"{base_url.rstrip('/')}/?{urlencode({'survey': name, key: token})}"


def _now() -> datetime:
    return datetime.now(UTC)


@overload
def _aware(value: datetime) -> datetime: ...
@overload
def _aware(value: None) -> None: ...
@overload
def _aware(value: datetime | None) -> datetime | None: ...
def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:  # SQLite returns naive datetimes
        return value.replace(tzinfo=UTC)
    return value


def _survey(row: Any) -> Survey:
    return Survey(
        row.id,
        row.name,
        SurveySettings.from_dict(dict(row.settings)),
        row.instructions,
        _aware(row.created_at),
        _aware(row.closed_at),
        row.batches,
        row.owner,
        getattr(row, "method", None) or "pairs",
    )


def check_instructions(text: str) -> str:
    """Instructions as plain text: at most :data:`INSTRUCTIONS_MAX` characters, no control
    characters other than line breaks and tabs."""
    text = text.replace("\r\n", "\n").strip()
    if len(text) > INSTRUCTIONS_MAX:
        raise SurveyError(
            f"the instructions are {len(text):,} characters long; at most "
            f"{INSTRUCTIONS_MAX:,} are kept"
        )
    bad = sorted({c for c in text if not c.isprintable() and c not in "\n\t"})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise SurveyError(f"the instructions must be plain text; they contain {shown}")
    return text


def _check_pairs_frame(pairs: pd.DataFrame, settings: SurveySettings) -> pd.DataFrame:
    """Whole-mg/dL pairs inside the survey's range, without repeats; the message names the
    rows that break a rule."""
    import numpy as np  # on use: reading a survey's state needs neither (survey status)
    import pandas as pd

    values = pairs[["reference", "estimate"]].apply(pd.to_numeric, errors="coerce")
    low, high = settings.glucose_range
    bad = ~np.isfinite(values.to_numpy(np.float64)).all(axis=1)
    outside = ~bad & ~values.apply(lambda c: c.between(low, high)).all(axis=1).to_numpy()
    if bad.any() or outside.any():
        rows = np.flatnonzero(bad | outside)[:10] + 1
        raise SurveyError(
            f"pairs {', '.join(map(str, rows))} are not numbers inside the survey's "
            f"range {low:g}-{high:g} mg/dL"
        )
    if not len(values):
        raise SurveyError("a survey needs at least one pair")
    return values.round().drop_duplicates().reset_index(drop=True)


# the SEG-method tables join the same metadata (scenarios, thresholds, matrices)
from ranking_core.surveys import seg_tables as _seg_tables  # noqa: E402, F401
