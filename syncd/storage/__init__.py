"""The record's storage: the only package that speaks SQL.

``Storage`` opens one ``Database`` and hands out a repository per aggregate:
``authors`` (followed authors and review decisions), ``groups`` (groups of
them), ``papers`` (papers and their revisions), ``versions`` (what histories
lack, and backfilled versions), ``runs`` (sync cycles), ``baselines`` (an
author's first complete sync, and what a cycle reads of its author),
``author_feeds`` (when each author's own feed was read), ``events`` (the event
log), ``outbox`` (webhook deliveries, claimed under leases), ``endpoints``
(the configured endpoints and how their deliveries stand),
``cooldowns`` (the arXiv hosts that throttle us), ``installation`` (this
installation's phase) and ``publications`` (where papers were published: the
lookups due, and what each wrote); on PostgreSQL, ``pacer`` is the arXiv politeness budget
every replica shares.  Callers hand in frozen write commands and get
frozen domain objects back, never rows: both are ``syncd.domain.model``'s
types (``rows`` maps one to the other).
Everything one sync cycle learns is written by ``apply_cycle`` in a single
transaction: papers, revisions, events and their deliveries appear together
or not at all; one harvested page by ``apply_harvest_page``, with the
harvest's progress (``harvests``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from sqlalchemy.engine import Engine

from syncd.domain.baselines import announcement
from syncd.domain.model import Event, PaperWrite, SyncStats, Truncation
from syncd.domain.vocabulary import ResultSource
from syncd.errors import ConflictError
from syncd.faults import fault_point
from syncd.storage.author_feeds import (
    AuthorFeeds,
    record_claims,
    record_reads,
    record_unknown_feed,
)
from syncd.storage.authors import Authors
from syncd.storage.baselines import (
    Baselines,
    baselined,
    followed,
    record_baseline,
)
from syncd.storage.cooldowns import Cooldowns
from syncd.storage.database import Database, now
from syncd.storage.deliveries import DIGEST_MAX_BYTES
from syncd.storage.endpoints import Endpoints
from syncd.storage.events import Events, publish
from syncd.storage.groups import Groups
from syncd.storage.harvests import HarvestProgress, Harvests, HarvestState, store_progress
from syncd.storage.installation import Installation
from syncd.storage.models import Attempt, Claim, DuePaper, EventQuery, EventStamp
from syncd.storage.outbox import Outbox
from syncd.storage.pacer import SharedPacer
from syncd.storage.paper_lists import (
    PaperCursor,
    PaperListQuery,
    PaperLists,
    PaperPage,
    PaperScope,
)
from syncd.storage.paper_reads import Papers
from syncd.storage.paper_sets import PaperSets
from syncd.storage.papers import (
    WrittenPaper,
    author_id,
    claim_writes,
    known_keys,
    stored_keys,
    write_papers,
)
from syncd.storage.publication_reads import PublicationReads
from syncd.storage.publications import Publications
from syncd.storage.purge import Purge, purge_author, purge_preview
from syncd.storage.runs import SyncRuns, finish_run
from syncd.storage.schema import metadata
from syncd.storage.versions import Versions

__all__ = [
    "DIGEST_MAX_BYTES",
    "Attempt",
    "AuthorFeeds",
    "Authors",
    "Baselines",
    "Claim",
    "Cooldowns",
    "Database",
    "DuePaper",
    "Endpoints",
    "EventQuery",
    "EventStamp",
    "Events",
    "Groups",
    "HarvestProgress",
    "HarvestState",
    "Harvests",
    "Outbox",
    "PaperCursor",
    "PaperListQuery",
    "PaperLists",
    "PaperPage",
    "PaperScope",
    "Papers",
    "PublicationReads",
    "Publications",
    "SharedPacer",
    "Storage",
    "SyncRuns",
    "Versions",
    "metadata",
]


class Storage:
    """The database and its repositories; the writes that span aggregates."""

    def __init__(self, url: str) -> None:
        self.db = Database(url)
        self.authors = Authors(self.db)
        self.groups = Groups(self.db)
        self.papers = Papers(self.db)
        self.paper_sets = PaperSets(self.db)
        self.paper_lists = PaperLists(self.db)
        self.versions = Versions(self.db)
        self.runs = SyncRuns(self.db)
        self.baselines = Baselines(self.db)
        self.author_feeds = AuthorFeeds(self.db)
        self.events = Events(self.db)
        self.outbox = Outbox(self.db)
        self.endpoints = Endpoints(self.db)
        self.harvests = Harvests(self.db)
        self.cooldowns = Cooldowns(self.db)
        self.installation = Installation(self.db)
        # Where papers were published: what lookups write, and what pages and the API show.
        self.publications = Publications(self.db)
        self.publication_reads = PublicationReads(self.db)
        # SQLite has one replica, which paces its requests in process.
        self.pacer = SharedPacer(self.db) if self.db.dialect == "postgresql" else None

    def host_pacer(self, host: str) -> SharedPacer | None:
        """The pacer every replica shares for ``host`` (Crossref's, OpenAlex's), on
        PostgreSQL; ``None`` on SQLite, whose one replica paces in process."""
        return SharedPacer(self.db, host) if self.db.dialect == "postgresql" else None

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for schema migrations."""
        return self.db.engine

    def close(self) -> None:
        """Let go of this process's runs; release every pooled connection."""
        self.runs.close()
        self.harvests.close()
        self.db.close()

    def purge_preview(self, name: str) -> Purge:
        """What purging the author ``name`` would delete and keep (``syncd.storage.purge``)."""
        return purge_preview(self.db, name)

    def purge_author(self, name: str) -> Purge:
        """Delete an author no longer followed, their ties and the papers only they held."""
        return purge_author(self.db, name)

    def import_seeds(self, author: str, papers: Sequence[PaperWrite]) -> int:
        """Store seed papers whose key the author does not have yet; return how many were new.

        All or nothing: one transaction.  Seeding publishes no events.
        """
        with self.db.transaction() as conn:
            # Locked: replicas seeding at the same moment take turns.
            owner = author_id(self.db, conn, author, lock=True)
            known = known_keys(conn, owner)
            fresh = [p for p in papers if p.key not in known]
            # Another author's seed of the same paper: the author holds that story too.
            stored = stored_keys(conn, [p.key for p in fresh])
            fresh = [replace(p, revisions=()) if p.key in stored else p for p in fresh]
            when = now()
            write_papers(conn, owner, fresh, run_id=None, when=when)
            if papers:
                # Seed links are a seeded author's first story: no quiet baseline.
                record_baseline(conn, owner, when)
            return len(fresh)

    def apply_cycle(
        self,
        run_id: int,
        author: str,
        writes: Sequence[PaperWrite],
        stats: SyncStats,
        *,
        claims: Collection[str] | None = None,
        unknown_feed: str | None = None,
        baseline: Mapping[str, Any] | None = None,
        read_seq: int | None = None,
        reads: Mapping[ResultSource, Truncation | None] | None = None,
    ) -> list[Event]:
        """Write a good cycle's papers, revisions and events and close its run, atomically.

        Raises ``ConflictError``, writing nothing, when the author was removed
        since the cycle began.

        ``claims``: the author's own feed was read and lists these ids (None:
        not read this cycle).  ``unknown_feed``: the feed was asked for and
        arXiv knows no author by this id.  ``baseline``: this is the author's
        first complete sync; it is dated, and publishes one ``author.added``
        whose ``changes`` are these.  ``read_seq``: the author's write sequence
        the plan started from; ``StalePlan`` (nothing stored) if another apply
        wrote their papers since (``claim_writes``).  ``reads``: whether each
        source read this cycle (name query, own feed) was cut at the cap.
        """
        when = now()
        with self.db.transaction() as conn:
            owner = author_id(self.db, conn, author, lock=True)
            if not followed(conn, owner):
                # Removed while the cycle ran: "no longer followed" means nothing more.
                raise ConflictError(
                    f"author {author!r} stopped being followed during the cycle: nothing stored"
                )
            if writes:
                claim_writes(conn, owner, read_seq)
            written = write_papers(conn, owner, writes, run_id=run_id, when=when)
            if claims is not None:
                record_claims(conn, owner, claims, when)
            if unknown_feed is not None:
                record_unknown_feed(conn, owner, unknown_feed, when)
            if reads:
                record_reads(conn, owner, reads)
            if baseline is not None:
                record_baseline(conn, owner, when)
                written = [*written, *_announced(writes, written, baseline)]
            events = publish(conn, author, owner, written, run_id=run_id, when=when)
            fault_point("store.cycle_written")
            finish_run(conn, run_id, stats, len(events))
        self.runs.release(run_id)
        fault_point("store.cycle_committed")
        return events

    def apply_harvest_baseline(
        self,
        author: str,
        writes: Sequence[PaperWrite],
        changes: Mapping[str, Any],
        *,
        since: date,
        read_seq: int,
        claims: Collection[str] | None = None,
        unknown_feed: str | None = None,
    ) -> list[Event]:
        """Write the baseline a harvest pass from ``since`` took of ``author`` and publish
        its ``author.added`` (``changes``), atomically; as ``apply_cycle`` does, without a run.

        Stores nothing and returns no event when the author was baselined since (a cycle
        by hand took it); raises ``ConflictError`` when they stopped being followed, and
        ``StalePlan`` when another apply wrote their papers after ``read_seq``.
        """
        when = now()
        with self.db.transaction() as conn:
            owner = author_id(self.db, conn, author, lock=True)
            if not followed(conn, owner):
                raise ConflictError(f"author {author!r} stopped being followed: nothing stored")
            if baselined(conn, owner):
                return []
            claim_writes(conn, owner, read_seq)
            written = write_papers(conn, owner, writes, run_id=None, when=when)
            if claims is not None:
                record_claims(conn, owner, claims, when)
            if unknown_feed is not None:
                record_unknown_feed(conn, owner, unknown_feed, when)
            record_baseline(conn, owner, when, since)
            written = [*written, *_announced(writes, written, changes)]
            return publish(conn, author, owner, written, run_id=None, when=when)

    def apply_harvest_page(
        self,
        writes: Sequence[tuple[str, Sequence[PaperWrite]]],
        progress: HarvestProgress,
        read_seqs: Mapping[str, int] | None = None,
    ) -> list[Event]:
        """Write one harvested page's papers, revisions and events (per author), and the
        harvest's progress past it, atomically: a page is applied once or not at all.

        ``read_seqs``: each author's write sequence the page's plan started
        from; ``StalePlan`` (nothing stored) if another apply wrote the papers
        of one of them since (``claim_writes``).
        """
        when = now()
        events: list[Event] = []
        seqs = read_seqs or {}
        with self.db.transaction() as conn:
            applied: list[tuple[str, int, list[WrittenPaper]]] = []
            for author, author_writes in writes:
                owner = author_id(self.db, conn, author)
                claim_writes(conn, owner, seqs.get(author))
                written = write_papers(conn, owner, author_writes, run_id=None, when=when)
                applied.append((author, owner, written))
            # Published once every author's writes are in: a record of two followed
            # authors is one story, its one event naming both.
            for author, owner, written in applied:
                events += publish(conn, author, owner, written, run_id=None, when=when)
            fault_point("store.harvest_page_written")
            store_progress(conn, progress)
        fault_point("store.harvest_page_committed")
        return events


def _announced(
    writes: Sequence[PaperWrite], written: Sequence[WrittenPaper], changes: Mapping[str, Any]
) -> list[WrittenPaper]:
    """The baseline's ``author.added`` (``announcement``), under its host paper's stored id."""
    added = announcement(writes, changes)
    if added is None:
        return []
    # By the write as planned: a seed joining a known story is written under its key.
    host = next(
        w.paper_id for w, planned in zip(written, writes, strict=True) if planned.key == added.key
    )
    return [WrittenPaper(replace(added, paper_id=host), host, None)]
