"""Two minimal loopback HTTP/1.1 servers, each run in its own process.

``pages DIR``: a static arXiv API.  ``GET /<dataset>/api/query?...&start=N&max_results=M``
answers the bytes of ``DIR/<dataset>/<N>.xml``, read once and then served
from memory, so neither side of a benchmark pays for rendering.  A
``max_results`` other than the dataset's page size (``DIR/<dataset>/page_size``)
is answered 400, as a start that is not a page boundary: the files hold
arXiv's own answer to exactly the requests syncd sends.

``hooks``: a webhook receiver that answers every POST 204 at once, verifies
nothing, and notes the arrival time of each ``webhook-id``.  ``GET /_stats``
returns ``{"count": n, "first": t0, "last": t1}`` (``time.time()``).

Both print their port on the first line of stdout and serve until killed.
Each runs in a process of its own so that its work never shares the GIL with
the code being measured.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

_REASONS = {200: b"OK", 204: b"No Content", 400: b"Bad Request", 404: b"Not Found"}


def _response(status: int, body: bytes = b"", content_type: bytes = b"text/plain") -> bytes:
    head = b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n" % (status, _REASONS[status], len(body))
    if body:
        head += b"Content-Type: " + content_type + b"\r\n"
    return head + b"\r\n" + body


class _Pages:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[tuple[str, int], bytes] = {}
        self.sizes: dict[str, int] = {}
        self.requests = 0

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> bytes:
        parts = urlsplit(target)
        if parts.path == "/_stats":
            return _response(200, json.dumps({"requests": self.requests}).encode())
        if parts.path == "/_forget":  # drop cached pages (a dataset's files were replaced)
            self.cache.clear()
            self.sizes.clear()
            return _response(204)
        segments = parts.path.strip("/").split("/")
        if len(segments) != 3 or segments[1:] != ["api", "query"]:
            return _response(404, b"no such path")
        dataset = segments[0]
        params = dict(parse_qsl(parts.query))
        self.requests += 1
        try:
            start = int(params.get("start", "0"))
            size = int(params.get("max_results", "10"))
            if dataset not in self.sizes:
                self.sizes[dataset] = int((self.root / dataset / "page_size").read_text())
            if size != self.sizes[dataset]:
                return _response(400, b"max_results does not match the pre-rendered pages")
            key = (dataset, start)
            page = self.cache.get(key)
            if page is None:
                page = (self.root / dataset / f"{start}.xml").read_bytes()
                self.cache[key] = page
        except (OSError, ValueError) as exc:
            return _response(404, str(exc).encode())
        return _response(200, page, b"application/atom+xml; charset=utf-8")


class _Hooks:
    def __init__(self) -> None:
        self.arrivals: list[float] = []

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> bytes:
        if method == "POST":
            self.arrivals.append(time.time())
            return _response(204)
        if target.startswith("/_stats"):
            stats = {
                "count": len(self.arrivals),
                "first": self.arrivals[0] if self.arrivals else None,
                "last": self.arrivals[-1] if self.arrivals else None,
            }
            return _response(200, json.dumps(stats).encode(), b"application/json")
        if target.startswith("/_reset"):
            self.arrivals.clear()
            return _response(204)
        return _response(404)


async def _serve(app: _Pages | _Hooks) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                writer.write(app.answer(method, target, headers, body))
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512, limit=1 << 20)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    kind = sys.argv[1]
    app: _Pages | _Hooks = _Pages(Path(sys.argv[2])) if kind == "pages" else _Hooks()
    asyncio.run(_serve(app))


if __name__ == "__main__":
    main()
