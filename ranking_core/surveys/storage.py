"""Surveys in the records database (the tables of :mod:`ranking_core.storage`'s database, created
by the Alembic revision ``surveys``).

Tables: ``surveys`` (name, settings, instructions, the organiser token's hash, closed or not),
``survey_pairs`` (every pair asked, mg/dL, with its batch and whether it is a check),
``survey_raters`` (name, token hash, revoked or not), ``survey_queue`` (each rater's pairs in
order: (rater, position) → pair, role) and ``survey_answers`` (one row per (rater, position):
saving an answer again, after a double click, a reload or going back, updates that row, so an
answer is never stored twice).

Every write is one short transaction (``BEGIN IMMEDIATE`` on SQLite; on PostgreSQL an advisory
lock per survey for changes to its queues, an ``INSERT … ON CONFLICT`` for answers), committed
before the call returns; inviting many raters writes them in batches of about
:data:`INVITE_ROWS` queue places, each its own transaction, so no answer or page waits long for
it. Reads take no lock.

Every survey belongs to its owner: the signed-in user who created it, or the operator (command
line, a dashboard without a login; no owner stored). A :class:`SurveyStore` made for a user
(``SurveyStore(store, by=user)``) lists and opens that user's surveys only, and refuses every
organiser action on another's; a rater's link works whoever owns the survey.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Row, func, insert, select, update

from ranking_core.storage import SAVED_BY_MAX, StorageError, Store, check_record_name
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
from ranking_core.surveys.tables import (
    ANSWER_COLUMNS,
    ANSWERS,
    INSTRUCTIONS_MAX,
    PAIRS,
    QUEUE,
    RATERS,
    SURVEYS,
    InviteInterrupted,
    QueueItem,
    RaterAccess,
    Survey,
    SurveyError,
    _check_pairs_frame,
    _now,
    _survey,
    check_instructions,
)

if TYPE_CHECKING:  # NumPy and pandas load where a method uses them (reading a survey's state
    import pandas as pd  # needs neither: riskgrid survey status)

__all__ = [
    "INSTRUCTIONS_MAX",
    "INVITE_ROWS",
    "InviteInterrupted",
    "QueueItem",
    "RaterAccess",
    "Survey",
    "SurveyError",
    "SurveyStore",
]

# queue places written by one transaction of an invitation (a few milliseconds of writing)
INVITE_ROWS = 2_000


OpenRow = TypeVar("OpenRow", bound=Row)  # a row of any columns


def check_open_for_answers(row: OpenRow | None) -> OpenRow:
    """``row`` (a rater's revoked_at and its survey's closed_at; None when the link is unknown)
    when its link still takes answers; SurveyError otherwise."""
    if row is None or row.revoked_at is not None or row.closed_at is not None:
        raise SurveyError("This link is no longer open for answers.")
    return row


class SurveyStore:
    """Surveys kept in the database of a :class:`~ranking_core.storage.Store` (same URL, same
    migrations, same transactions).

    Parameters
    ----------
    store : the record store (or its URL; default: the user's database).
    by : the signed-in user this store acts for: surveys it creates are theirs, and it lists,
        opens and changes theirs only. None: the operator (command line, a dashboard without a
        login, a survey's organiser link, batches planned for raters), who may act on any.
    """

    def __init__(self, store: Store | str | None = None, *, by: str | None = None) -> None:
        self.store = store if isinstance(store, Store) else Store(store)
        self.engine = self.store.engine
        self.by = None if by is None else check_record_name(by, "owner")[:SAVED_BY_MAX]

    def acting_for(self, by: str | None) -> SurveyStore:
        """The same surveys, for the signed-in user ``by`` (None: the operator)."""
        return SurveyStore(self.store, by=by)

    def _read(self, action: str):
        return self.store._read(action)

    def _mine(self, row: Any) -> bool:
        return self.by is None or row.owner == self.by

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
            survey_id = self.insert_survey(conn, name, token, settings, instructions)
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

    def insert_survey(
        self,
        conn,
        name: str,
        token: str,
        settings: SurveySettings,
        instructions: str,
        method: str = "pairs",
    ) -> int:
        """Insert the survey's row (owned by the store's user, one batch, the organiser token's
        hash) in the open transaction ``conn``; its id. :class:`SurveyError` when the name is
        taken."""
        if conn.scalar(select(SURVEYS.c.id).where(SURVEYS.c.name == name)) is not None:
            raise SurveyError(f"a survey named {name!r} already exists; choose another name")
        return conn.execute(
            insert(SURVEYS)
            .values(
                name=name,
                created_at=_now(),
                organiser_hash=token_hash(token),
                settings=settings.to_dict(),
                instructions=instructions,
                batches=1,
                owner=self.by,
                method=method,
            )
            .returning(SURVEYS.c.id)
        ).scalar_one()

    def get(self, name: str) -> Survey:
        """The survey of that name; :class:`SurveyError` if there is none, or if it is not the
        user's this store acts for."""
        with self._read(f"reading survey {name!r}") as conn:
            row = conn.execute(select(SURVEYS).where(SURVEYS.c.name == str(name))).first()
        if row is None:
            raise SurveyError(f"no survey named {name!r} is stored")
        if not self._mine(row):
            raise SurveyError(
                f"survey {name!r} is not yours: only the one who created it may see its "
                "results or change it"
            )
        return _survey(row)

    def list_surveys(self) -> list[Survey]:
        """The surveys this store may open (for a signed-in user: the ones they created)."""
        query = select(SURVEYS).order_by(SURVEYS.c.id)
        if self.by is not None:
            query = query.where(SURVEYS.c.owner == self.by)
        with self._read("listing the surveys") as conn:
            return [_survey(r) for r in conn.execute(query)]

    def close(self, name: str) -> Survey:
        """Stop answers (idempotent); export still works."""
        self.get(name)  # there, and the user's
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
        and checks. Returns (rater, personal link) for each.

        The raters are written in batches of about :data:`INVITE_ROWS` queue places, each batch
        its own short transaction (a reader or a rater's answer waits for one batch at most).
        Names are checked before anything is written; a failure after some batches were stored
        is an :class:`InviteInterrupted` carrying the links of the raters already invited."""
        survey = self.get(name)
        if not survey.is_open:
            raise SurveyError(f"survey {name!r} is closed; no raters can be invited")
        if not isinstance(raters, Sequence):  # a number (a Python or NumPy integer)
            listed, total = None, int(raters)
        else:
            listed = [check_record_name(r, "rater") for r in raters]
            total = len(listed)
            repeated = sorted({n for n in listed if listed.count(n) > 1})
            if repeated:
                raise SurveyError(
                    f"rater names must be unique in a survey; {repeated[0]!r} is taken"
                )
        if total < 1:
            raise SurveyError("no raters to invite")
        with self._read(f"reading survey {name!r}") as conn:
            taken = set(conn.scalars(select(RATERS.c.name).where(RATERS.c.survey_id == survey.id)))
            pairs = conn.execute(
                select(PAIRS.c.id, PAIRS.c.expected)
                .where(PAIRS.c.survey_id == survey.id, PAIRS.c.batch == 0)
                .order_by(PAIRS.c.id)
            ).all()
        clash = sorted(set(listed or ()) & taken)
        if clash:
            raise SurveyError(f"rater names must be unique in a survey; {clash[0]!r} is taken")
        from ranking_core.elicit.rules import MAX_RATERS as SEG_MAX_RATERS

        if survey.method == "seg" and len(taken) + total > SEG_MAX_RATERS:
            raise SurveyError(
                f"a SEG-method survey has at most {SEG_MAX_RATERS:,} raters (the limit of "
                f"riskgrid elicit); {len(taken):,} are invited, {total:,} more would pass it"
            )
        design = [p.id for p in pairs if p.expected is None]
        checks = [p.id for p in pairs if p.expected is not None]
        try:
            check_invitation(total, len(design), survey.settings)
        except ValueError as exc:
            raise SurveyError(str(exc)) from None
        links: list[tuple[str, str]] = []
        try:
            while len(links) < total:
                with self._write(f"inviting raters to survey {name!r}", name) as conn:
                    left = total - len(links)
                    links += self._invite_batch(conn, survey, listed, left, design, checks)
        except StorageError as exc:
            if not links:
                raise
            raise InviteInterrupted(
                f"{exc}; {len(links)} of {total} raters were invited before that", links
            ) from exc
        return links

    def _invite_batch(
        self,
        conn: Connection,
        survey: Survey,
        listed: list[str] | None,
        left: int,
        design: list[int],
        checks: list[int],
    ) -> list[tuple[str, str]]:
        """Invite up to ``left`` more raters in this transaction, stopping once about
        :data:`INVITE_ROWS` queue places are written; returns their links."""
        import numpy as np

        settings = survey.settings
        if conn.scalar(select(SURVEYS.c.closed_at).where(SURVEYS.c.id == survey.id)):
            raise SurveyError(f"survey {survey.name!r} was closed; no raters can be invited")
        invited = int(conn.scalar(select(func.count()).where(RATERS.c.survey_id == survey.id)) or 0)
        done = 0 if listed is None else len(listed) - left
        links, rows = [], 0
        for offset in range(left):
            index = invited + offset
            rater = f"rater-{index + 1}" if listed is None else listed[done + offset]
            if listed is None and conn.scalar(
                select(RATERS.c.id).where(RATERS.c.survey_id == survey.id, RATERS.c.name == rater)
            ):
                raise SurveyError(
                    f"rater names must be unique in a survey; {rater!r} is taken (rename that "
                    "rater's invitation or invite by names)"
                )
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
            if not order:  # a SEG-method survey: no pairs to queue
                links.append((rater, survey.rater_link(token)))
                continue
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
            rows += len(order)
            if rows >= INVITE_ROWS:
                break
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
        with self._read("opening an organiser link") as conn:
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
        with self._read("opening a rater link") as conn:
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
        with self._read("reading a rater's queue") as conn:
            return [QueueItem(*row) for row in conn.execute(query)]

    def answer(self, access: RaterAccess, position: int, rating: float) -> None:
        """Store (or change) the rater's answer at a queue position, committed on return; the
        same (rater, position) saved twice keeps one row. Refused when the survey was closed or
        the link revoked meanwhile, or the position is not in the rater's queue."""
        rating = float(rating)
        if rating not in RISK_OPTIONS:
            raise SurveyError(f"an answer is one of 0, 0.5, … 4; got {rating:g}")
        from sqlalchemy.dialects import postgresql, sqlite  # the upsert only (0.1 s to import)

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
            row = check_open_for_answers(conn.execute(check).first())
            if row.position is None:
                raise SurveyError(f"position {position} is not in this rater's queue")
            conn.execute(statement)

    # -- what the organiser reads ----------------------------------------------------------------
    def answer_rows(self, name: str) -> list[Row]:
        """Every queue place of the survey with its answer, by rater (in order of invitation) and
        position: database rows of the fields :data:`~ranking_core.surveys.tables.ANSWER_COLUMNS`
        (reference, estimate in mg/dL; rating None if not answered; expected for checks)."""
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
        with self._read(f"reading the answers of survey {name!r}") as conn:
            return list(conn.execute(query).all())

    def answers(self, name: str) -> pd.DataFrame:
        """:meth:`answer_rows` as a frame: rating NaN where not answered, the times as UTC
        timestamps."""
        import pandas as pd

        frame = pd.DataFrame(self.answer_rows(name), columns=list(ANSWER_COLUMNS))
        for column in ("first_answered_at", "answered_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True)
        frame["rating"] = frame["rating"].astype(float)
        frame["revoked"] = frame["revoked"].astype(bool)
        return frame

    def rater_rows(self, name: str) -> list[Row]:
        """The invited raters as database rows (name, invited: their order, revoked)."""
        survey = self.get(name)
        with self._read(f"reading the raters of survey {name!r}") as conn:
            return list(
                conn.execute(
                    select(
                        RATERS.c.name,
                        RATERS.c.invited,
                        RATERS.c.revoked_at.isnot(None).label("revoked"),
                    )
                    .where(RATERS.c.survey_id == survey.id)
                    .order_by(RATERS.c.invited)
                ).all()
            )

    def raters(self, name: str) -> pd.DataFrame:
        """The invited raters: rater, invited (order), revoked."""
        import pandas as pd

        return pd.DataFrame(self.rater_rows(name), columns=["rater", "invited", "revoked"])

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
            if batches is None:  # deleted since it was read above
                raise SurveyError(f"no survey named {name!r} is stored")
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
            import numpy as np

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
