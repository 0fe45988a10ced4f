"""The OAI-PMH harvest's durable progress, and the claim that lets one replica harvest.

One row (id 1) of ``harvest_state``.  The claim is held as sync runs are
(``RunLiveness``): a mark the system drops when the process ends, however it
ends, so a harvest killed at any point is resumed by the next one to claim,
from the token its last applied page stored.  A page's writes and the token
that follows it are stored in one transaction (``Storage.apply_harvest_page``),
so resuming never loses nor doubles a page.

What is stored is syncd's own writing (a date, a UTC time), and what is read
back is read tolerantly: a value an older syncd stored from a page it did not
check reads as unknown, and the harvest starts over from what it still knows,
rather than every reader of the state failing until someone edits the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.moments import utc_stamp
from syncd.storage.database import Database, now, utc
from syncd.storage.liveness import RunLiveness
from syncd.storage.schema import harvest_state_table

__all__ = [
    "HARVEST_MARK",
    "MAX_ERROR_CHARS",
    "HarvestProgress",
    "HarvestState",
    "Harvests",
    "store_progress",
]

# The liveness mark of the harvest: far from any sync run's id (its byte in
# SQLite's lock file, its slot in this process's marks).
HARVEST_MARK = 2**31 - 1
# A harvest still claimed after this long is stuck, if its process lives at all.
STALE_CLAIM_SECONDS = 6 * 3600.0
# The longest failure kept: the reason, not a page of arXiv's text (the strip shows 300).
MAX_ERROR_CHARS = 1000
_ROW = 1


@dataclass(frozen=True, slots=True)
class HarvestState:
    """Where the harvest stands.

    ``from_date`` is the next harvest's ``from`` (None before the first);
    ``started_response_date``, ``pass_started_at``, ``set_index`` and
    ``token`` describe the harvest in progress (running, or interrupted); ``pages`` and ``records``
    count what it applied so far, or what the last complete one applied.
    """

    from_date: date | None = None
    started_response_date: datetime | None = None
    pass_started_at: datetime | None = None
    set_index: int = 0
    token: str | None = None
    pages: int = 0
    records: int = 0
    last_response_date: datetime | None = None
    last_success_at: datetime | None = None
    claimed_at: datetime | None = None
    last_failure_at: datetime | None = None
    last_error: str | None = None

    @property
    def in_progress(self) -> bool:
        """Whether a harvest was interrupted and resumes where it stopped."""
        return self.started_response_date is not None

    @property
    def failing(self) -> bool:
        """Whether the last harvest to end stopped on an error (none completed since)."""
        if self.last_failure_at is None:
            return False
        return self.last_success_at is None or self.last_failure_at > self.last_success_at


@dataclass(frozen=True, slots=True)
class HarvestProgress:
    """What a page applied moves the harvest to.

    ``complete``: that was the last page of the last set; ``from`` advances
    to the date of the harvest's first responseDate.  ``pass_started_at``:
    this machine's clock before the harvest read the followed authors.
    """

    started_response_date: datetime
    set_index: int
    token: str | None
    records: int
    complete: bool = False
    pass_started_at: datetime | None = None


class Harvests:
    """Reading the harvest's state, claiming it and letting it go."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._liveness = RunLiveness(db)

    def state(self) -> HarvestState:
        """The stored state; the empty one before any harvest."""
        with self._db.transaction() as conn:
            return _read(conn)

    def claim(self) -> HarvestState | None:
        """Claim the harvest for this process and return its state; None if another holds it.

        Another process holds it while its claim is marked alive and not stale.
        """
        pid = self._liveness.backend_pid()
        table = harvest_state_table
        claimed = False
        try:
            with self._db.transaction() as conn:
                _ensure_row(self._db, conn)
                row = conn.execute(
                    sa.select(table.c.claimed_at, table.c.backend_pid)
                    .where(table.c.id == _ROW)
                    .with_for_update()
                ).one()
                started = now()
                if row.claimed_at is not None:
                    fresh = utc(row.claimed_at) > started - timedelta(seconds=STALE_CLAIM_SECONDS)
                    if fresh and self._liveness.alive(conn, HARVEST_MARK, row.backend_pid):
                        return None
                self._liveness.hold(HARVEST_MARK)
                claimed = True
                conn.execute(
                    table.update()
                    .where(table.c.id == _ROW)
                    .values(claimed_at=started, backend_pid=pid)
                )
                return _read(conn)
        except BaseException:
            if claimed:
                self._liveness.release(HARVEST_MARK)
            raise

    def start_from(self, since: date) -> None:
        """Start the next harvest from ``since`` (``--from``), dropping one in progress."""
        with self._db.transaction() as conn:
            _ensure_row(self._db, conn)
            conn.execute(
                harvest_state_table.update()
                .where(harvest_state_table.c.id == _ROW)
                .values(
                    from_date=since.isoformat(), started_response_date=None, set_index=0, token=None
                )
            )

    def restart(self) -> None:
        """Forget the token (it expired): the current set is listed again from ``from``."""
        with self._db.transaction() as conn:
            conn.execute(
                harvest_state_table.update()
                .where(harvest_state_table.c.id == _ROW)
                .values(token=None)
            )

    def release(self, failure: str | None = None) -> None:
        """Let go of the claim: the harvest ended here, complete or not; ``failure`` is
        the error it stopped on, recorded with the time."""
        values: dict[str, object] = {"claimed_at": None, "backend_pid": None}
        if failure is not None:
            values |= {"last_failure_at": now(), "last_error": failure[:MAX_ERROR_CHARS]}
        try:
            with self._db.transaction() as conn:
                conn.execute(
                    harvest_state_table.update()
                    .where(harvest_state_table.c.id == _ROW)
                    .values(values)
                )
        finally:
            self._liveness.release(HARVEST_MARK)

    def close(self) -> None:
        """Drop this process's marks (it is shutting down)."""
        self._liveness.close()


def store_progress(conn: Connection, progress: HarvestProgress) -> None:
    """Record a page's progress inside the transaction that applies its writes."""
    table = harvest_state_table
    # The first page of a harvest starts its counts; the others add to them.
    first = table.c.started_response_date.is_(None)
    values: dict[str, object] = {
        "pages": sa.case((first, 1), else_=table.c.pages + 1),
        "records": sa.case((first, progress.records), else_=table.c.records + progress.records),
    }
    started = progress.started_response_date.astimezone(UTC)
    if progress.complete:
        values |= {
            "from_date": started.date().isoformat(),
            # Stored as arXiv writes its responseDate, 20 characters.
            "last_response_date": utc_stamp(started, seconds=True),
            "last_success_at": now(),
            "started_response_date": None,
            "pass_started_at": None,
            "set_index": 0,
            "token": None,
        }
    else:
        values |= {
            "started_response_date": utc_stamp(started, seconds=True),
            "pass_started_at": progress.pass_started_at,
            "set_index": progress.set_index,
            "token": progress.token,
        }
    conn.execute(table.update().where(table.c.id == _ROW).values(values))


def _ensure_row(db: Database, conn: Connection) -> None:
    conn.execute(
        db.insert_ignoring_conflicts(harvest_state_table, "id").values(
            id=_ROW, set_index=0, pages=0, records=0
        )
    )


def _read(conn: Connection) -> HarvestState:
    row = conn.execute(
        sa.select(harvest_state_table).where(harvest_state_table.c.id == _ROW)
    ).first()
    if row is None:
        return HarvestState()
    started = _moment(row.started_response_date)
    return HarvestState(
        from_date=_day(row.from_date),
        # An unreadable start drops the harvest in progress: it starts over from ``from``.
        started_response_date=started,
        pass_started_at=utc(row.pass_started_at) if started and row.pass_started_at else None,
        set_index=row.set_index if started else 0,
        token=row.token if started else None,
        pages=row.pages,
        records=row.records,
        last_response_date=_moment(row.last_response_date),
        last_success_at=utc(row.last_success_at) if row.last_success_at else None,
        claimed_at=utc(row.claimed_at) if row.claimed_at else None,
        last_failure_at=utc(row.last_failure_at) if row.last_failure_at else None,
        last_error=row.last_error,
    )


def _day(text: str | None) -> date | None:
    """A stored ``from``; None when absent or not a date (an older syncd's poison)."""
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _moment(text: str | None) -> datetime | None:
    """A stored responseDate as a UTC time; None when absent or unreadable."""
    try:
        # Only the shape ``utc_stamp`` stores, to the second: anything else is unreadable.
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) if text else None
    except ValueError:
        return None
