"""A group as its pages, its feed and ``syncd report`` read it: found by name, reported on.

The counting is ``syncd.domain.reports``'; this reads what it counts.
"""

from __future__ import annotations

from collections.abc import Collection

from syncd.domain.reports import Period, Report, group_report
from syncd.storage import EventQuery, Storage

__all__ = ["report_of"]


def report_of(storage: Storage, name: str, members: Collection[str], period: Period) -> Report:
    """The report of the group ``name`` of ``members`` over ``period``, from the event log."""
    query = EventQuery(
        authors=frozenset(members), published_from=period.start, published_before=period.end
    )
    held = storage.paper_sets.of_authors(members)
    holders = {paper.arxiv_id or paper.key: paper.authors for paper in held}
    return group_report(name, members, storage.events.page(query), period, holders)
