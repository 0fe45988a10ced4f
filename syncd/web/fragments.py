"""Rendered changes, kept by the id of the event or revision they show.

Events and revisions never change once written, so what ``syncd.rendering``
made of one is good for the life of the process: feed readers poll the same
fifty events every few minutes, and each diff is computed once, not per
request.  Bounded (least recently used out first) so a crawler walking every
page of a large record cannot grow it without end.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from markupsafe import Markup

from syncd.rendering import changes_html, record_html
from syncd.storage import Event, Revision

__all__ = ["Fragments"]

DEFAULT_SIZE = 4096
_NO_CHANGE = Markup('<p class="nochange">No change in the compared fields.</p>')


class Fragments:
    """The HTML of events and revisions, rendered once each (up to ``size`` kept)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, Markup] = OrderedDict()
        # Routes run in a thread pool: one lock around the bookkeeping.
        self._lock = threading.Lock()

    def event(self, event: Event) -> Markup:
        """What changed in ``event``; a new paper's record when nothing was compared."""

        def render() -> Markup:
            if event.changes:
                return changes_html(event.changes)
            return record_html(event.record) if event.record is not None else Markup("")

        return self._get(("event", event.id), render)

    def revision(self, paper_id: int, revision: Revision) -> Markup:
        """What ``revision`` changed; the whole record for a paper's first one."""

        def render() -> Markup:
            if revision.changes:
                return changes_html(revision.changes)
            return record_html(revision.record) if revision.seq == 1 else _NO_CHANGE

        return self._get(("revision", paper_id, revision.seq), render)

    def _get(self, key: Hashable, render: Callable[[], Markup]) -> Markup:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        made = render()
        with self._lock:
            self._items[key] = made
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return made
