"""Rendered changes, kept by the id of the event or revision they show.

Events and revisions never change once written, so what ``syncd.render.html``
made of one is good for the life of the process: feed readers poll the same
fifty events every few minutes, and each diff is computed once, not per
request.  Bounded by the bytes it holds, not by a count (a count of large
fragments, 200 KB abstracts rewritten, is hundreds of megabytes): least
recently used out first, so a crawler walking every page of a large record
cannot grow it past ``MAX_BYTES``.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from markupsafe import Markup

from syncd.domain.history import HistoryStep
from syncd.domain.model import Event
from syncd.domain.vocabulary import AUTHOR_EVENTS, PUBLICATION_EVENTS, EventType
from syncd.render.describe import describe
from syncd.render.html import changes_html, described_html, record_html, removal_html

__all__ = ["MAX_BYTES", "Fragments"]

# The rendered HTML the cache holds at most (the strings' own size in memory).
MAX_BYTES = 64 * 1024 * 1024
_NO_CHANGE = Markup('<p class="nochange">No change in the compared fields.</p>')


class Fragments:
    """The HTML of events and revisions, rendered once each (up to ``max_bytes`` kept)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, Markup] = OrderedDict()
        self._held = 0
        # Routes run in a thread pool: one lock around the bookkeeping.
        self._lock = threading.Lock()

    def event(self, event: Event) -> Markup:
        """What changed in ``event``; a new paper's record when nothing was compared, or
        what a removed one was last known as; where it was published, and the notices on
        that version, in words."""

        def render() -> Markup:
            if event.type in AUTHOR_EVENTS:
                return Markup("<p>{}</p>").format(describe(event, public_url=None).summary)
            if event.type in PUBLICATION_EVENTS:
                told = describe(event, public_url=None)
                return described_html(told.summary, told.diffs, told.links)
            if event.changes:
                return changes_html(event.changes)
            if event.type == EventType.REMOVED:
                return removal_html(event.record)
            return record_html(event.record) if event.record is not None else Markup("")

        return self._get(("event", event.id), render)

    def step(self, paper_id: int, step: HistoryStep) -> Markup:
        """What a history's revision changed against the one before it; the whole record
        for the first.

        Kept by both revisions' seqs: a version backfilled later comes between
        two stored ones, and what the later one changed is then told anew.
        """
        revision = step.revision

        def render() -> Markup:
            if revision.changes:
                return changes_html(revision.changes)
            return record_html(revision.record) if step.first else _NO_CHANGE

        before = step.previous.seq if step.previous is not None else None
        return self._get(("revision", paper_id, before, revision.seq), render)

    @property
    def held_bytes(self) -> int:
        """The bytes of the fragments kept now: at most ``max_bytes``."""
        return self._held

    def _get(self, key: Hashable, render: Callable[[], Markup]) -> Markup:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        made = render()
        size = sys.getsizeof(made)
        if size > self.max_bytes:
            return made  # shown, never kept: it would push out everything else
        with self._lock:
            if key not in self._items:  # another thread may have kept it meanwhile
                self._items[key] = made
                self._held += size
            while self._held > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._held -= sys.getsizeof(dropped)
        return made
