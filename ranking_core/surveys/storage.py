"""Surveys in the records database (the tables of :mod:`ranking_core.storage`'s database, created
by the Alembic revision ``surveys``).

Tables: ``surveys`` (name, settings, instructions, the organiser token's hash, closed or not),
``survey_pairs`` (every pair asked, mg/dL, with its batch and whether it is a check),
``survey_raters`` (name, token hash, revoked or not), ``survey_queue`` (each rater's pairs in
order: (rater, position) → pair, role) and ``survey_answers`` (one row per (rater, position):
saving an answer again, after a double click, a reload or going back, updates that row, so an
answer is never stored twice).

Every write is one transaction (``BEGIN IMMEDIATE`` on SQLite; on PostgreSQL an advisory lock per
survey for changes to its queues, an ``INSERT … ON CONFLICT`` for answers), committed before the
call returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import (
    JSON,
    Column,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from ranking_core.storage import METADATA, NAME_MAX, StorageError, Store, check_record_name
from ranking_core.surveys.design import (
    RISK_OPTIONS,
    SurveySettings,
    batch_chunk,
    check_invitation,
    check_pairs,
    new_token,
    queue_order,
    start_chunk,
    token_hash,
    tokens_match,
)

__all__ = ["INSTRUCTIONS_MAX", "QueueItem", "RaterAccess", "Survey", "SurveyError", "SurveyStore"]

INSTRUCTIONS_MAX = 20_000  # characters
HASH_LENGTH = 64  # hex SHA-256

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
)
PAIRS = Table(
    "survey_pairs",
    METADATA,
    Column("id", Integer, primary_key=True),
    Column(
        "survey_id",
        Integer,
        ForeignKey("surveys.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("batch", Integer, nullable=False),
    Column("reference", Float, nullable=False),
    Column("estimate", Float, nullable=False),
    Column("expected", String(16), nullable=True),  # check pairs: "none" or "extreme"
)
RATERS = Table(
    "survey_raters",
    METADATA,
    Column("id", Integer, primary_key=True),
    Column("survey_id", Integer, ForeignKey("surveys.id", ondelete="CASCADE"), nullable=False),
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
    Column(
        "rater_id", Integer, ForeignKey("survey_raters.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("position", Integer, primary_key=True),
    Column("pair_id", Integer, ForeignKey("survey_pairs.id", ondelete="CASCADE"), nullable=False),
    Column("role", String(16), nullable=False),
    Column("batch", Integer, nullable=False),
)
ANSWERS = Table(
    "survey_answers",
    METADATA,
    Column(
        "rater_id", Integer, ForeignKey("survey_raters.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("position", Integer, primary_key=True),
    Column("rating", Float, nullable=False),
    Column("first_answered_at", DateTime(timezone=True), nullable=False),
    Column("answered_at", DateTime(timezone=True), nullable=False),
)


class SurveyError(StorageError):
    """A survey operation was refused; the message says why in one sentence."""


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


class SurveyStore:
    """Surveys kept in the database of a :class:`~ranking_core.storage.Store` (same URL, same
    migrations, same transactions)."""

    def __init__(self, store: Store | str | None = None) -> None:
        self.store = store if isinstance(store, Store) else Store(store)
        self.engine = self.store.engine

    @contextmanager
    def _write(self, action: str, survey: str) -> Iterator[Connection]:
        with self.store._write(action, "survey", survey) as conn:
            yield conn

    # -- surveys ---------------------------------------------------------------------------------
    def create(
        self, name: str, pairs: pd.DataFrame, settings: SurveySettings, instructions: str = ""
    ) -> tuple[Survey, str]:
        """Store a new survey with its start design (``pairs``: reference, estimate in mg/dL)
        and check pairs; returns the survey and the organiser's token (shown once)."""
        name = check_record_name(name, "survey")
        instructions = check_instructions(instructions)
        design = _check_pairs_frame(pairs, settings)
        checks = check_pairs(settings.checks, settings.glucose_range)
        token = new_token()
        with self._write(f"creating survey {name!r}", name) as conn:
            if conn.scalar(select(SURVEYS.c.id).where(SURVEYS.c.name == name)) is not None:
                raise SurveyError(f"a survey named {name!r} already exists; choose another name")
            survey_id = conn.execute(
                insert(SURVEYS)
                .values(
                    name=name,
                    created_at=_now(),
                    organiser_hash=token_hash(token),
                    settings=settings.to_dict(),
                    instructions=instructions,
                    batches=1,
                )
                .returning(SURVEYS.c.id)
            ).scalar_one()
            rows = [
                {
                    "survey_id": survey_id,
                    "batch": 0,
                    "reference": float(r),
                    "estimate": float(e),
                    "expected": None,
                }
                for r, e in design.itertuples(index=False)
            ]
            rows += [
                {
                    "survey_id": survey_id,
                    "batch": 0,
                    "reference": float(r),
                    "estimate": float(e),
                    "expected": x,
                }
                for r, e, x in checks.itertuples(index=False)
            ]
            conn.execute(insert(PAIRS), rows)
        return self.get(name), token

    def get(self, name: str) -> Survey:
        """The survey of that name; :class:`SurveyError` if there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(select(SURVEYS).where(SURVEYS.c.name == str(name))).first()
        if row is None:
            raise SurveyError(f"no survey named {name!r} is stored")
        return _survey(row)

    def list_surveys(self) -> list[Survey]:
        with self.engine.connect() as conn:
            return [_survey(r) for r in conn.execute(select(SURVEYS).order_by(SURVEYS.c.id))]

    def close(self, name: str) -> Survey:
        """Stop answers (idempotent); export still works."""
        with self._write(f"closing survey {name!r}", name) as conn:
            conn.execute(
                update(SURVEYS)
                .where(SURVEYS.c.name == name, SURVEYS.c.closed_at.is_(None))
                .values(closed_at=_now())
            )
        return self.get(name)

    # -- raters ----------------------------------------------------------------------------------
    def invite(self, name: str, raters: int | Sequence[str]) -> list[tuple[str, str]]:
        """Invite raters (a number, named rater-1, …, or their names); each gets the pairs of the
        start design due to them (:func:`~ranking_core.surveys.design.start_chunk`) with repeats
        and checks. Returns (rater, personal link) for each."""
        survey = self.get(name)
        if not survey.is_open:
            raise SurveyError(f"survey {name!r} is closed; no raters can be invited")
        settings = survey.settings
        with self._write(f"inviting raters to survey {name!r}", name) as conn:
            invited = conn.scalar(select(func.count()).where(RATERS.c.survey_id == survey.id))
            names = (
                [f"rater-{invited + i + 1}" for i in range(int(raters))]
                if isinstance(raters, int)
                else [check_record_name(r, "rater") for r in raters]
            )
            if not names:
                raise SurveyError("no raters to invite")
            taken = set(conn.scalars(select(RATERS.c.name).where(RATERS.c.survey_id == survey.id)))
            clash = sorted(set(names) & taken) or sorted({n for n in names if names.count(n) > 1})
            if clash:
                raise SurveyError(f"rater names must be unique in a survey; {clash[0]!r} is taken")
            pairs = conn.execute(
                select(PAIRS.c.id, PAIRS.c.expected)
                .where(PAIRS.c.survey_id == survey.id, PAIRS.c.batch == 0)
                .order_by(PAIRS.c.id)
            ).all()
            design = [p.id for p in pairs if p.expected is None]
            checks = [p.id for p in pairs if p.expected is not None]
            try:
                check_invitation(len(names), len(design), settings)
            except ValueError as exc:
                raise SurveyError(str(exc)) from None
            links = []
            for offset, rater in enumerate(names):
                index = invited + offset
                token = new_token()
                rater_id = conn.execute(
                    insert(RATERS)
                    .values(
                        survey_id=survey.id,
                        name=rater,
                        token_hash=token_hash(token),
                        invited=index,
                        created_at=_now(),
                    )
                    .returning(RATERS.c.id)
                ).scalar_one()
                chunk = [design[i] for i in start_chunk(len(design), settings.per_rater, index)]
                rng = np.random.default_rng([settings.seed, index])
                order = queue_order(chunk, checks, settings.repeats, rng)
                conn.execute(
                    insert(QUEUE),
                    [
                        {
                            "rater_id": rater_id,
                            "position": p,
                            "pair_id": pair,
                            "role": role,
                            "batch": 0,
                        }
                        for p, (pair, role) in enumerate(order)
                    ],
                )
                links.append((rater, survey.rater_link(token)))
        return links

    def revoke(self, name: str, rater: str) -> None:
        """Revoke a rater's link (their answers stay)."""
        survey = self.get(name)
        with self._write(f"revoking rater {rater!r}", name) as conn:
            done = conn.execute(
                update(RATERS)
                .where(RATERS.c.survey_id == survey.id, RATERS.c.name == rater)
                .values(revoked_at=func.coalesce(RATERS.c.revoked_at, _now()))
            )
            if done.rowcount == 0:
                raise SurveyError(f"survey {name!r} has no rater named {rater!r}")

    # -- links -----------------------------------------------------------------------------------
    def organiser(self, name: str, token: str) -> Survey | None:
        """The survey if ``token`` is its organiser token, else None."""
        with self.engine.connect() as conn:
            row = conn.execute(select(SURVEYS).where(SURVEYS.c.name == str(name))).first()
        if row is None or not tokens_match(str(token), row.organiser_hash):
            return None
        return _survey(row)

    def rater(self, name: str, token: str) -> RaterAccess | None:
        """The rater whose link this is, if the survey is open and the link not revoked."""
        digest = token_hash(str(token))
        query = (
            select(
                SURVEYS,
                RATERS.c.id.label("rater_id"),
                RATERS.c.name.label("rater"),
                RATERS.c.token_hash,
                RATERS.c.revoked_at,
            )
            .join(RATERS, RATERS.c.survey_id == SURVEYS.c.id)
            .where(SURVEYS.c.name == str(name), RATERS.c.token_hash == digest)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if (
            row is None
            or not tokens_match(str(token), row.token_hash)
            or row.revoked_at is not None
            or row.closed_at is not None
        ):
            return None
        return RaterAccess(_survey(row), row.rater_id, row.rater)

    # -- answering -------------------------------------------------------------------------------
    def queue(self, rater_id: int) -> list[QueueItem]:
        """A rater's queue in order, each place with its answer (one statement)."""
        query = (
            select(
                QUEUE.c.position,
                PAIRS.c.reference,
                PAIRS.c.estimate,
                QUEUE.c.role,
                ANSWERS.c.rating,
            )
            .join(PAIRS, PAIRS.c.id == QUEUE.c.pair_id)
            .outerjoin(
                ANSWERS,
                (ANSWERS.c.rater_id == QUEUE.c.rater_id) & (ANSWERS.c.position == QUEUE.c.position),
            )
            .where(QUEUE.c.rater_id == rater_id)
            .order_by(QUEUE.c.position)
        )
        with self.engine.connect() as conn:
            return [QueueItem(*row) for row in conn.execute(query)]

    def answer(self, access: RaterAccess, position: int, rating: float) -> None:
        """Store (or change) the rater's answer at a queue position, committed on return; the
        same (rater, position) saved twice keeps one row. Refused when the survey was closed or
        the link revoked meanwhile, or the position is not in the rater's queue."""
        rating = float(rating)
        if rating not in RISK_OPTIONS:
            raise SurveyError(f"an answer is one of 0, 0.5, … 4; got {rating:g}")
        now = _now()
        dialect = {"sqlite": sqlite, "postgresql": postgresql}.get(self.store.dialect)
        if dialect is None:
            raise SurveyError(f"surveys need SQLite or PostgreSQL, not {self.store.dialect}")
        statement = dialect.insert(ANSWERS).values(
            rater_id=access.rater_id,
            position=int(position),
            rating=rating,
            first_answered_at=now,
            answered_at=now,
        )
        statement = statement.on_conflict_do_update(
            index_elements=[ANSWERS.c.rater_id, ANSWERS.c.position],
            set_={"rating": rating, "answered_at": now},
        )
        check = (
            select(RATERS.c.revoked_at, SURVEYS.c.closed_at, QUEUE.c.position)
            .join(SURVEYS, SURVEYS.c.id == RATERS.c.survey_id)
            .outerjoin(
                QUEUE, (QUEUE.c.rater_id == RATERS.c.id) & (QUEUE.c.position == int(position))
            )
            .where(RATERS.c.id == access.rater_id)
        )
        with self._write("saving an answer", f"{access.survey.name}/{access.rater_id}") as conn:
            row = conn.execute(check).first()
            if row is None or row.revoked_at is not None or row.closed_at is not None:
                raise SurveyError("This link is no longer open for answers.")
            if row.position is None:
                raise SurveyError(f"position {position} is not in this rater's queue")
            conn.execute(statement)

    # -- what the organiser reads ----------------------------------------------------------------
    def answers(self, name: str) -> pd.DataFrame:
        """Every queue place of the survey with its answer (NaN if not answered): rater,
        revoked, position, batch, role, pair_id, reference, estimate (mg/dL), expected (checks),
        rating, first_answered_at, answered_at (UTC)."""
        survey = self.get(name)
        query = (
            select(
                RATERS.c.name.label("rater"),
                RATERS.c.revoked_at.isnot(None).label("revoked"),
                QUEUE.c.position,
                QUEUE.c.batch,
                QUEUE.c.role,
                QUEUE.c.pair_id,
                PAIRS.c.reference,
                PAIRS.c.estimate,
                PAIRS.c.expected,
                ANSWERS.c.rating,
                ANSWERS.c.first_answered_at,
                ANSWERS.c.answered_at,
            )
            .join(QUEUE, QUEUE.c.rater_id == RATERS.c.id)
            .join(PAIRS, PAIRS.c.id == QUEUE.c.pair_id)
            .outerjoin(
                ANSWERS,
                (ANSWERS.c.rater_id == QUEUE.c.rater_id) & (ANSWERS.c.position == QUEUE.c.position),
            )
            .where(RATERS.c.survey_id == survey.id)
            .order_by(RATERS.c.invited, QUEUE.c.position)
        )
        with self.engine.connect() as conn:
            frame = pd.DataFrame(
                conn.execute(query).all(),
                columns=[
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
                ],
            )
        for column in ("first_answered_at", "answered_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True)
        frame["rating"] = frame["rating"].astype(float)
        frame["revoked"] = frame["revoked"].astype(bool)
        return frame

    def raters(self, name: str) -> pd.DataFrame:
        """The invited raters: rater, invited (order), revoked."""
        survey = self.get(name)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(RATERS.c.name, RATERS.c.invited, RATERS.c.revoked_at.isnot(None))
                .where(RATERS.c.survey_id == survey.id)
                .order_by(RATERS.c.invited)
            ).all()
        return pd.DataFrame(rows, columns=["rater", "invited", "revoked"])

    def append_batch(
        self, name: str, pairs: pd.DataFrame, after_batches: int, added: dict | None = None
    ) -> int:
        """Add a batch of pairs and share it among the active raters with the survey's overlap
        (:func:`~ranking_core.surveys.design.batch_chunk`) and repeats. Only if the survey still
        has ``after_batches`` batches (a batch proposed twice at once is added once); returns
        the number of batches afterwards. ``added``, when given, is filled inside the
        transaction when this call added the batch: batch (its number from 1), pairs,
        raters; left empty when another call had added one first."""
        survey = self.get(name)
        settings = survey.settings
        design = _check_pairs_frame(pairs, settings)
        with self._write(f"adding a batch to survey {name!r}", name) as conn:
            batches = conn.scalar(select(SURVEYS.c.batches).where(SURVEYS.c.id == survey.id))
            if batches != after_batches:
                return int(batches)
            if conn.scalar(select(SURVEYS.c.closed_at).where(SURVEYS.c.id == survey.id)):
                raise SurveyError(f"survey {name!r} is closed; no batch can be added")
            active = conn.execute(
                select(RATERS.c.id, RATERS.c.invited)
                .where(RATERS.c.survey_id == survey.id, RATERS.c.revoked_at.is_(None))
                .order_by(RATERS.c.invited)
            ).all()
            if not active:
                raise SurveyError(f"survey {name!r} has no active rater to give a batch to")
            returning = insert(PAIRS).returning(PAIRS.c.id, sort_by_parameter_order=True)
            pair_ids = (
                conn.execute(
                    returning,
                    [
                        {
                            "survey_id": survey.id,
                            "batch": batches,
                            "reference": float(r),
                            "estimate": float(e),
                            "expected": None,
                        }
                        for r, e in design.itertuples(index=False)
                    ],
                )
                .scalars()
                .all()
            )
            for index, rater in enumerate(active):
                chunk = [
                    pair_ids[i]
                    for i in batch_chunk(len(pair_ids), settings.overlap, len(active), index)
                ]
                rng = np.random.default_rng([settings.seed, rater.invited, batches])
                order = queue_order(chunk, [], settings.repeats, rng)
                start = conn.scalar(
                    select(func.coalesce(func.max(QUEUE.c.position) + 1, 0)).where(
                        QUEUE.c.rater_id == rater.id
                    )
                )
                conn.execute(
                    insert(QUEUE),
                    [
                        {
                            "rater_id": rater.id,
                            "position": start + p,
                            "pair_id": pair,
                            "role": role,
                            "batch": batches,
                        }
                        for p, (pair, role) in enumerate(order)
                    ],
                )
            conn.execute(
                update(SURVEYS).where(SURVEYS.c.id == survey.id).values(batches=batches + 1)
            )
            if added is not None:
                added.update(batch=batches + 1, pairs=len(pair_ids), raters=len(active))
        return batches + 1
