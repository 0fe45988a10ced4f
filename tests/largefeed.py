"""A loopback server of one author's own feed listing tens of thousands of papers.

Every ``GET /a/<id>.atom`` is answered with ``tests.feedxml.large_author_feed``'s
pieces as they are written (HTTP/1.0, no Content-Length: the body ends when
the connection closes), so a 50,000-entry feed is served without ever
existing whole in the test's memory.  ``requests`` counts the feeds asked for.
"""

from __future__ import annotations

from datetime import UTC, datetime

from syncd.domain.record import Record
from tests.feedxml import large_author_feed
from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = ["LargeFeedServer"]


class LargeFeedServer(LoopbackServer):
    """Serves every author id's feed as ``count`` papers like ``record``."""

    def __init__(self, record: Record, count: int) -> None:
        super().__init__(_Handler)
        self.record = record
        self.count = count
        self.requests = 0

    @property
    def author_feed_url(self) -> str:
        """What ``[arxiv] author_feed_url`` points at: ``http://127.0.0.1:PORT/a/``."""
        return f"http://127.0.0.1:{self.port}/a/"


class _Handler(LoopbackHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        server: LargeFeedServer = self.owner
        server.requests += 1
        feed_id = self.path.rsplit("/", 1)[-1].removesuffix(".atom")
        self.send_response(200)
        self.send_header("Content-Type", "application/atom+xml; charset=utf-8")
        self.end_headers()
        now = datetime.now(UTC)
        for piece in large_author_feed(feed_id, server.record, server.count, now=now):
            self.wfile.write(piece)
