"""The database schema: every table syncd keeps, as SQLAlchemy Core metadata.

Alembic's migrations (``syncd/migrations``) create and change these tables;
``syncd db check`` compares the migrated schema with this module.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from syncd.domain.author_names import name_key

__all__ = [
    "arxiv_cooldowns_table",
    "arxiv_pacer_table",
    "author_decisions_table",
    "authors_table",
    "deliveries_table",
    "digest_events_table",
    "endpoints_table",
    "events_table",
    "group_members_table",
    "groups_table",
    "harvest_state_table",
    "installation_table",
    "metadata",
    "paper_authors_table",
    "papers_table",
    "revisions_table",
    "sync_runs_table",
    "version_refusals_table",
]

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _name_key(context: Any) -> str:
    return name_key(context.get_current_parameters()["name"])


authors_table = sa.Table(
    "authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    # One author per name without regard to case (issue 29): name_key() of
    # the name, filled in by every INSERT.  Case folding may triple a
    # character's length.  NULL only for the duplicates 0016 stopped following.
    sa.Column("name_key", sa.String(600), default=_name_key),
    sa.Column("created_at", _TIME, nullable=False),
    # What identifies and defines the author (issue 22); for ``config`` authors a
    # copy of their ``[[authors]]`` table, reconciled at start.
    sa.Column("orcid", sa.String(19)),
    sa.Column("arxiv_author_id", sa.String(64)),
    sa.Column("query", sa.String(2000)),
    sa.Column("seeds", _JSON, nullable=False, server_default="[]"),
    sa.Column("origin", sa.String(8), nullable=False, server_default="config"),
    sa.Column("removed_at", _TIME),  # no longer followed; papers, history and events stay
    sa.Column("baseline_at", _TIME),  # the first complete sync ended: it announced nothing
    # A harvest pass baselined the author, from this day (YYYY-MM-DD): papers a cycle finds
    # dated before it are the baseline's, announced by nothing (issue 34).
    sa.Column("baseline_from", sa.String(10)),
    sa.Column("feed_fetched_at", _TIME),  # the author's own arXiv feed, read at most daily
    # Applies that wrote the author's papers: a plan read before the last one is stale.
    sa.Column("write_seq", sa.Integer, nullable=False, server_default="0"),
    # The feed's id when arXiv answered that it knows no author by it (issue 30), and since
    # when: the author's state until a read of the feed succeeds or the identifiers change.
    sa.Column("feed_unknown_id", sa.String(64)),
    sa.Column("feed_unknown_since", _TIME),
    # The last name query / own feed read cut at [arxiv] max_results_per_author (issue 34):
    # how many were read and how many arXiv said it holds; NULL when read whole.
    sa.Column("query_truncated_at", sa.Integer),
    sa.Column("query_results", sa.Integer),
    sa.Column("feed_truncated_at", sa.Integer),
    sa.Column("feed_results", sa.Integer),
    # How the author's cycles stand, kept from sync_runs by its triggers (migration 0028):
    # the newest run, newest running, good and failed (or abandoned) one, and when the good
    # one ended.  What the status strip counts and /authors filters, without an aggregate.
    sa.Column("latest_run_id", sa.Integer),
    sa.Column("running_run_id", sa.Integer),
    sa.Column("ok_run_id", sa.Integer),
    sa.Column("ok_finished_at", _TIME),
    sa.Column("failed_run_id", sa.Integer),
    sa.Index("ix_authors_name_key", "name_key", unique=True),
)

# One row per paper (issue 32): a story, however many followed authors hold it;
# each author's hold on it is a row of ``paper_authors``.
papers_table = sa.Table(
    "papers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("key", sa.String(120), nullable=False, unique=True),
    sa.Column("arxiv_id", sa.String(40), unique=True),
    sa.Column("record", _JSON, nullable=False),
    sa.Column("record_hash", sa.String(32), nullable=False),
    # Set when a write may have left earlier versions out of the history (a
    # link or an addition at vN > 1, a jump of versions); cleared once every
    # version is in (syncd.service.backfill).
    sa.Column("backfill_pending", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("updated_at", _TIME, nullable=False),
    # The paper's latest change (its last event, else its last revision) and its folded
    # search text, kept by syncd.storage.paper_index: every list of papers is read by
    # (changed_at, id), newest first, a page at a time.  The text's trigram index is
    # the migration's (an FTS5 table on SQLite, a pg_trgm GIN index on PostgreSQL).
    sa.Column("changed_at", _TIME, nullable=False),
    sa.Column("search_text", sa.Text, nullable=False, server_default=""),
    # Every cycle looks for flagged papers; almost none are.
    sa.Index("ix_papers_backfill_pending", "backfill_pending"),
    sa.Index("ix_papers_changed_at_id", "changed_at", "id"),
)

# The ties: how each author holds a paper (tracked, a candidate, a seed not
# linked yet, removed), and what their cycles counted of it.
paper_authors_table = sa.Table(
    "paper_authors",
    metadata,
    sa.Column("paper_id", sa.ForeignKey("papers.id"), primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("origin", sa.String(8), nullable=False),
    sa.Column("absent_syncs", sa.Integer, nullable=False, default=0),
    # In the author's own arXiv feed (ORCID or arXiv author id): theirs by their claim.
    sa.Column("claimed", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("candidate_reason", sa.String(500)),  # why a candidate is not tracked
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("updated_at", _TIME, nullable=False),
    # An author's papers by status: every cycle, page and count starts here.
    sa.Index("ix_paper_authors_author_status", "author_id", "status"),
    # A paper's best hold (the counts per status of every list) read from the index alone.
    sa.Index("ix_paper_authors_paper_status", "paper_id", "status"),
)

sync_runs_table = sa.Table(
    "sync_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("started_at", _TIME, nullable=False),
    sa.Column("finished_at", _TIME),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("requests", sa.Integer, nullable=False, default=0),
    sa.Column("entries", sa.Integer, nullable=False, default=0),
    sa.Column("events", sa.Integer, nullable=False, default=0),
    # PostgreSQL: the backend pid of the session the running process keeps open
    # (syncd.storage.liveness); gone from pg_stat_activity, the process is gone.
    sa.Column("backend_pid", sa.Integer),
    # Each author's latest runs by outcome (the status strip, /authors, a standing's filter)
    # read from the index alone.
    sa.Index("ix_sync_runs_author_standing", "author_id", "status", "id", "finished_at"),
)

revisions_table = sa.Table(
    "revisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("observed_at", _TIME, nullable=False),
    sa.Column("source", sa.String(200), nullable=False),
    sa.Column("version", sa.Integer),
    # arXiv's date for the version: its entry's <updated> (manual 3.3.2.1);
    # null for seed revisions and rows arXiv gave no date for.
    sa.Column("version_date", _TIME),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
    sa.Column("record", _JSON, nullable=False),
    sa.Column("record_hash", sa.String(32), nullable=False),
    sa.Column("sync_run_id", sa.ForeignKey("sync_runs.id")),
    sa.UniqueConstraint("paper_id", "seq"),
)

events_table = sa.Table(
    "events",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False, unique=True),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("revision_id", sa.ForeignKey("revisions.id")),
    sa.Column("sync_run_id", sa.ForeignKey("sync_runs.id")),
    sa.Column("kinds", _JSON, nullable=False),
    sa.Column("changes", _JSON, nullable=False),
    # The followed authors who held the paper as tracked when it was published, sorted:
    # every delivery of the event names the same people.  ``author_id`` is whose sync
    # found it (an author's event is about them).
    sa.Column("authors", _JSON, nullable=False, server_default="[]"),
    # A paper's events newest first (its feed, its page) without a scan of the log.
    sa.Index("ix_events_paper_seq", "paper_id", "seq"),
)


endpoints_table = sa.Table(
    "endpoints",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    # Never the URL itself: it carries credentials (see syncd.domain.routing).
    sa.Column("url_hash", sa.String(64)),
    sa.Column("format", sa.String(16), nullable=False, server_default="standard"),
    # What one message carries (DeliveryGroup); "group" is an SQL keyword.
    sa.Column("grouping", sa.String(8), nullable=False, server_default="event"),
    sa.Column("events", _JSON, nullable=False),
    sa.Column("kinds", _JSON, nullable=False),
    # Routing by person and group (issue 32): author and group names; empty takes all.
    sa.Column("authors", _JSON, nullable=False, server_default="[]"),
    sa.Column("groups", _JSON, nullable=False, server_default="[]"),
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("disabled_at", _TIME),
    sa.Column("disabled_reason", sa.Text),
    sa.Column("created_at", _TIME, nullable=False),
)

deliveries_table = sa.Table(
    "deliveries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("event_seq", sa.ForeignKey("events.seq"), nullable=False),
    sa.Column("endpoint_id", sa.ForeignKey("endpoints.id"), nullable=False),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("next_attempt_at", _TIME, nullable=False),
    sa.Column("lease_owner", sa.String(80)),
    sa.Column("lease_until", _TIME),
    sa.Column("last_status", sa.Integer),
    sa.Column("last_error", sa.Text),
    sa.Column("created_at", _TIME, nullable=False),
    sa.Column("delivered_at", _TIME),
    # A cycle's digest to an endpoint grouped by cycle: the message id every
    # attempt of it carries.  Its events are in digest_events; event_seq and
    # paper_id are its first event's.  Null: the row carries event_seq alone.
    sa.Column("digest_id", sa.String(40)),
    sa.UniqueConstraint("event_seq", "endpoint_id"),
    # In the claim's order, so a claim reads only as far as its batch.
    sa.Index("ix_deliveries_due", "status", "next_attempt_at", "event_seq"),
    # The claim's "no earlier pending event of this paper" test looks here.
    sa.Index("ix_deliveries_order", "endpoint_id", "paper_id", "status", "event_seq"),
)

digest_events_table = sa.Table(
    "digest_events",
    metadata,
    sa.Column("delivery_id", sa.ForeignKey("deliveries.id"), primary_key=True),
    sa.Column("event_seq", sa.ForeignKey("events.seq"), primary_key=True),
    # Redelivering an event finds the digests that carry it here.
    sa.Index("ix_digest_events_event_seq", "event_seq"),
)

# One row (id 1): when the last arXiv request of any replica started.
# PostgreSQL replicas take their turns here (syncd.storage.pacer); SQLite,
# one replica only, paces in process and leaves it alone.
arxiv_pacer_table = sa.Table(
    "arxiv_pacer",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("last_start", _TIME),
)

# One row per arXiv host that throttled us (syncd.domain.throttle): the cooldown
# every request to it, of every replica and process, waits for.  ``step`` is
# in seconds; a host never throttled has no row.
arxiv_cooldowns_table = sa.Table(
    "arxiv_cooldowns",
    metadata,
    sa.Column("host", sa.String(300), primary_key=True),
    sa.Column("step", sa.Float, nullable=False),
    sa.Column("not_before", _TIME),
    sa.Column("throttled_at", _TIME),
    sa.Column("throttles", sa.Integer, nullable=False),
)

# Versions arXiv refused when asked by versioned id, and when to ask again
# (syncd.domain.refusals).  ``next_try_at`` is null while the version is still asked
# for every cycle, and set once it is set aside.  A version that comes back
# loses its row.
version_refusals_table = sa.Table(
    "version_refusals",
    metadata,
    sa.Column("arxiv_id", sa.String(40), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_error", sa.String(500), nullable=False),
    sa.Column("last_refused_at", _TIME, nullable=False),
    sa.Column("next_try_at", _TIME),
)

# Review decisions on an author's candidates (``syncd authors confirm`` / ``reject``):
# a rejected id is never the author's again, as if in ``exclude_ids``.
author_decisions_table = sa.Table(
    "author_decisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("arxiv_id", sa.String(40), nullable=False),
    sa.Column("decision", sa.String(9), nullable=False),
    sa.Column("decided_at", _TIME, nullable=False),
    sa.UniqueConstraint("author_id", "arxiv_id"),
)

# One row (id 1): the OAI-PMH harvest's progress (syncd.storage.harvests).
# ``from_date`` is the next harvest's ``from``; while a harvest runs,
# ``started_response_date`` is its first page's responseDate, ``set_index``
# the set it walks and ``token`` its next page's; ``claimed_at`` and
# ``backend_pid`` are the claim of the replica running it; ``last_failure_at``
# and ``last_error`` the last harvest that stopped on an error.
harvest_state_table = sa.Table(
    "harvest_state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("from_date", sa.String(10)),
    sa.Column("started_response_date", sa.String(40)),
    # This machine's clock before the harvest in progress read the followed authors: those
    # added by then are covered by its pass (issue 34's baselines).
    sa.Column("pass_started_at", _TIME),
    sa.Column("set_index", sa.Integer, nullable=False),
    sa.Column("token", sa.Text),
    sa.Column("pages", sa.Integer, nullable=False),
    sa.Column("records", sa.Integer, nullable=False),
    sa.Column("last_response_date", sa.String(40)),
    sa.Column("last_success_at", _TIME),
    sa.Column("claimed_at", _TIME),
    sa.Column("backend_pid", sa.Integer),
    sa.Column("last_failure_at", _TIME),
    sa.Column("last_error", sa.Text),
)

# One row: this installation's phase, a fraction of the cycles' interval
# drawn once (migration 0021), so that installations do not all ask arXiv at
# the same second while the replicas of one agree (domain.cadence).
installation_table = sa.Table(
    "installation",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("phase", sa.Float, nullable=False),
)

# Groups of followed authors (issue 32): ``config`` ones are the file's [[groups]],
# reconciled at start; ``runtime`` ones are made by `syncd groups` and the API.
groups_table = sa.Table(
    "groups",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("description", sa.String(2000), nullable=False, server_default=""),
    sa.Column("origin", sa.String(8), nullable=False),
    sa.Column("created_at", _TIME, nullable=False),
)

# Who is in which group: an author may be in several.
group_members_table = sa.Table(
    "group_members",
    metadata,
    sa.Column("group_id", sa.ForeignKey("groups.id"), primary_key=True),
    sa.Column("author_id", sa.ForeignKey("authors.id"), primary_key=True),
    # An author's groups (routing, an author's page) without a scan.
    sa.Index("ix_group_members_author_id", "author_id"),
)

# Issue 33: where papers were published.  One row per publication ever tied to a
# paper (syncd.domain.publications.PublicationLink): ``key`` is its DOI, or
# ``journal-ref`` for a journal reference arXiv gave without one; ``state`` is a
# LinkState, so a rejected link stays to be remembered and a replaced one to be told.
publication_links_table = sa.Table(
    "publication_links",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("key", sa.String(320), nullable=False),
    sa.Column("doi", sa.String(300)),
    sa.Column("venue", sa.String(1000)),
    sa.Column("type", sa.String(60)),
    sa.Column("date", sa.String(10)),
    sa.Column("title", sa.Text),
    sa.Column("url", sa.String(2000)),
    sa.Column("source", sa.String(12), nullable=False),
    sa.Column("level", sa.String(16), nullable=False),
    sa.Column("how", sa.String(40), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("title_similarity", sa.Float),
    sa.Column("author_share", sa.Float),
    sa.Column("year_gap", sa.Integer),
    sa.Column("state", sa.String(12), nullable=False),
    sa.Column("found_at", _TIME, nullable=False),
    sa.Column("decided_at", _TIME),
    sa.UniqueConstraint("paper_id", "key"),
    # The review queue without a scan.
    sa.Index("ix_publication_links_state", "state"),
)

# Notices on a paper's published version (corrections, retractions, ...), each once.
publication_notices_table = sa.Table(
    "publication_notices",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("paper_id", sa.ForeignKey("papers.id"), nullable=False),
    sa.Column("link_id", sa.ForeignKey("publication_links.id"), nullable=False),
    sa.Column("doi", sa.String(300), nullable=False),
    sa.Column("type", sa.String(60), nullable=False),
    sa.Column("date", sa.String(10)),
    sa.Column("source", sa.String(60), nullable=False),
    sa.Column("found_at", _TIME, nullable=False),
    sa.UniqueConstraint("paper_id", "doi"),
)

# When each paper is looked up next, and what its last lookup found.  ``record_hash``
# is the arXiv record's at that lookup (a new doi or journal_ref makes it due at once);
# ``turn`` counts lookups written, so two replicas never both write one.
publication_checks_table = sa.Table(
    "publication_checks",
    metadata,
    sa.Column("paper_id", sa.ForeignKey("papers.id"), primary_key=True, autoincrement=False),
    sa.Column("due_at", _TIME, nullable=False),
    sa.Column("checked_at", _TIME),
    sa.Column("searched_at", _TIME),
    sa.Column("record_hash", sa.String(32)),
    sa.Column("turn", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.String(500)),
    sa.Index("ix_publication_checks_due_at", "due_at"),
)

# When the last request of any replica to each publication source's host started
# (syncd.storage.pacer's rule, one row per host): Crossref and OpenAlex each keep
# their own pace, shared by every replica.
host_pacers_table = sa.Table(
    "host_pacers",
    metadata,
    sa.Column("host", sa.String(300), primary_key=True),
    sa.Column("last_start", _TIME),
)
