"""An author's name query in a cycle, read newest first up to the cap (issue 34).

Each author keeps at most ``[arxiv] max_results_per_author`` of their query's
results; a read that reaches the cap is cut ("truncated at N"), and the older
papers it did not read are unread, not absent: the cycle counts no absence
(``syncd.service.sync``), so a prolific author's papers never look removed.
Pages are parsed as they arrive and each author's entries go straight to
``syncd.service.planning.observe``, so a cycle holds at most the cap of
records per author, never the whole result set.

Authors without a custom query share batched OR queries.  A batch may read
the cap for each of its authors; when its first page announces more than
that, it is not read further and each author's query runs alone, so one
prolific name never cuts the reads of the names batched with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from syncd import metrics
from syncd.domain.attribution import split_batch
from syncd.domain.authors import Author
from syncd.domain.model import Truncation
from syncd.domain.planner import Observed
from syncd.domain.record import Record
from syncd.domain.vocabulary import ResultSource
from syncd.errors import FeedError
from syncd.faults import fault_point
from syncd.service.batches import batch_query
from syncd.service.planning import observe
from syncd.sources.arxiv import ArxivClient
from syncd.storage import Storage

__all__ = ["QueryReader", "read_queries"]

_log = structlog.get_logger(__name__)


@dataclass(slots=True)
class QueryReader:
    """One author's share of a name query: what their cycle keeps, and how much matched."""

    author: Author
    observed: Observed
    kept: int = 0
    matched: int = 0

    def take(self, storage: Storage, records: Sequence[Record], cap: int) -> None:
        """Keep the author's entries of one page while under ``cap``; count them all."""
        self.matched += len(records)
        room = max(cap - self.kept, 0)
        if room:
            observe(storage, self.author, self.observed, records[:room])
            self.kept += min(room, len(records))


def read_queries(
    storage: Storage, client: ArxivClient, readers: Sequence[QueryReader]
) -> list[Truncation | None]:
    """Read the name query of ``readers`` (one author, or a batch), each up to the cap.

    Returns each author's read as cut at the cap (a ``Truncation``), or
    ``None`` when it was read whole.
    """
    cap = client.settings.max_results_per_author
    cuts = _read(storage, client, readers, cap)
    if cuts is None:  # the batch holds more than it may read: each author alone
        cuts = [cut for reader in readers for cut in _read(storage, client, [reader], cap) or ()]
    for reader, cut in zip(readers, cuts, strict=True):
        if cut is not None:
            metrics.observe_truncated(ResultSource.QUERY)
            _log.warning(
                "author_query_truncated", author=reader.author.name, kept=cut.kept, total=cut.total
            )
    return cuts


def _read(
    storage: Storage, client: ArxivClient, readers: Sequence[QueryReader], cap: int
) -> list[Truncation | None] | None:
    """Stream the query's pages, handing each entry to the authors it may be by.

    ``None``, having read one page and kept nothing, for a batch whose
    results exceed the cap times its authors.
    """
    limit = cap * len(readers)
    alone = len(readers) == 1
    read = total = 0
    for page in client.search(batch_query([r.author for r in readers]), limit=limit):
        fault_point("sync.page_fetched")
        total = page.total_results
        if not alone and total > limit:
            return None
        read += len(page.records)
        if alone:
            readers[0].take(storage, page.records, cap)
            continue
        shares, orphans = split_batch(page.records, [r.author.name for r in readers])
        if orphans:
            # A lost entry reads as an absent paper: fail rather than guess.
            raise FeedError(
                "batched query returned entries no author's name matches: "
                + ", ".join(str(r.arxiv_id) for r in orphans[:5])
            )
        for reader in readers:
            reader.take(storage, shares.get(reader.author.name, ()), cap)
    if alone:
        # Reaching the cap is a cut even when arXiv holds exactly that many:
        # only reading past it could tell, and the cap is not passed.
        cut = read >= limit
        return [Truncation(ResultSource.QUERY, read, max(total, read)) if cut else None]
    return [
        Truncation(ResultSource.QUERY, r.kept, r.matched) if r.matched > cap else None
        for r in readers
    ]
