"""Hot spots of a call, from pyinstrument's statistical profiler (main thread only).

Two views of the same samples: *self* time per function (where the CPU is,
C calls attributed to the built-in or extension function), and *inclusive*
time per function of syncd's own code (which of syncd's steps costs what).
Shares are of the profiled call's wall time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from benchmarks.common import fresh_heap

_SYNCD = "/syncd/"


def _where(frame: Any, line: int | None = None) -> str:
    path = frame.file_path or "<built-in>"
    if _SYNCD in path:
        path = "syncd/" + path.split(_SYNCD, 1)[1]
        if line:  # where the function starts: tells the comprehensions apart
            path = f"{path}:{line}"
    elif "/benchmarks/" in path:
        path = "benchmarks/" + path.split("/benchmarks/", 1)[1]
    elif "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif "/lib/python3" in path:
        path = "stdlib:" + path.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return path


def profile(fn: Callable[[], Any], *, top: int = 12, interval: float = 0.0005) -> dict[str, Any]:
    """Run ``fn`` once under the profiler; return its wall time and its hot spots."""
    from pyinstrument import Profiler  # noqa: PLC0415

    fresh_heap()
    profiler = Profiler(interval=interval)
    profiler.start()
    try:
        fn()
    finally:
        profiler.stop()
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    total = root.time if root is not None else 0.0
    self_time: dict[tuple[str, str], float] = defaultdict(float)
    inclusive: dict[tuple[str, str], float] = defaultdict(float)

    def walk(frame: Any, ancestors: frozenset[tuple[str, str]]) -> None:
        if frame.is_synthetic:
            return
        key = (frame.function, _where(frame, frame.line_no))
        self_time[key] += frame.total_self_time
        if key[1].startswith("syncd/") and key not in ancestors:
            inclusive[key] += frame.time
        inner = ancestors | {key}
        for child in frame.children:
            walk(child, inner)

    if root is not None:
        walk(root, frozenset())

    def rows(table: dict[tuple[str, str], float]) -> list[dict[str, Any]]:
        ranked = sorted(table.items(), key=lambda item: -item[1])[:top]
        return [
            {
                "function": function,
                "file": where,
                "seconds": round(seconds, 4),
                "share": round(seconds / total, 3) if total else 0.0,
            }
            for (function, where), seconds in ranked
        ]

    return {"seconds": round(total, 4), "self": rows(self_time), "syncd_inclusive": rows(inclusive)}


def format_hotspots(name: str, hot: dict[str, Any], top: int = 8) -> str:
    lines = [f"{name}: profiled {hot['seconds']:.3f} s"]
    lines.append("  self time:")
    lines += [
        f"    {r['share'] * 100:5.1f}%  {r['function']}  ({r['file']})" for r in hot["self"][:top]
    ]
    lines.append("  inclusive, syncd code:")
    lines += [
        f"    {r['share'] * 100:5.1f}%  {r['function']}  ({r['file']})"
        for r in hot["syncd_inclusive"][:top]
    ]
    return "\n".join(lines)


def sample_threads(
    fn: Callable[[], Any], *, top: int = 12, interval: float = 0.001
) -> dict[str, Any]:
    """Hot spots of ``fn`` across *all* threads (pyinstrument sees only the calling one).

    A sampler thread reads ``sys._current_frames()`` every ``interval``
    seconds.  Samples of threads parked on a condition or lock (idle pool
    workers, the main thread waiting for futures) are left out; the rest,
    waiting on sockets included, are attributed to the innermost Python frame
    (self) and to every syncd frame on the stack (inclusive).  Shares are of
    the busy thread-samples.
    """
    import sys  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    self_counts: dict[tuple[str, str], int] = defaultdict(int)
    inclusive: dict[tuple[str, str], int] = defaultdict(int)
    totals = {"busy": 0, "idle": 0}
    stop = threading.Event()

    def key(code: Any) -> tuple[str, str]:
        class _F:
            file_path = code.co_filename

        return code.co_name, _where(_F, code.co_firstlineno)

    def sampler() -> None:
        sampler_id = threading.get_ident()
        while not stop.is_set():
            for ident, frame in sys._current_frames().items():
                if ident in (sampler_id,):
                    continue
                leaf = key(frame.f_code)
                if leaf[1].startswith("stdlib:") and (
                    leaf[0] in ("wait", "acquire", "_wait_for_tstate_lock", "get")
                    or (leaf[0] == "_worker" and leaf[1].endswith("futures/thread.py"))
                ):
                    totals["idle"] += 1
                    continue
                totals["busy"] += 1
                self_counts[leaf] += 1
                seen: set[tuple[str, str]] = set()
                f: Any = frame
                while f is not None:
                    k = key(f.f_code)
                    if k[1].startswith("syncd/") and k not in seen:
                        inclusive[k] += 1
                        seen.add(k)
                    f = f.f_back
            time.sleep(interval)

    thread = threading.Thread(target=sampler, name="bench-sampler", daemon=True)
    started = time.perf_counter()
    thread.start()
    try:
        fn()
    finally:
        stop.set()
        thread.join()
    elapsed = time.perf_counter() - started
    busy = totals["busy"] or 1

    def rows(table: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
        ranked = sorted(table.items(), key=lambda item: -item[1])[:top]
        return [
            {"function": f, "file": w, "samples": n, "share": round(n / busy, 3)}
            for (f, w), n in ranked
        ]

    return {
        "seconds": round(elapsed, 4),
        "busy_samples": totals["busy"],
        "idle_samples": totals["idle"],
        "self": rows(self_counts),
        "syncd_inclusive": rows(inclusive),
    }
