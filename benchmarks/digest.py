"""Row "Digest render": chat messages for 1,000 changes against 100, time per change.

A sync cycle's digest lists every change of the cycle in one Slack or Discord
message (``syncd.delivery.messages.message_body``); the issue asks that
rendering a digest of 1,000 changes stays linear.  The baseline is the same
rendering at 100 changes, run alternately in the same process: one timed
call renders the 1,000-change digest once, the other the 100-change digest
ten times, so both sides are offered 1,000 changes and their ratio is the
ratio of time per change (1.0 is linear; a quadratic renderer would show
about 10x).  Also measured the same way: one message per event (``group =
"event"``), 1,000 messages against 100 ten times.

Each event is a realistic revision: a title of about 80 characters and an
abstract of about 1,200 with a few words changed in each, hostile
characters included (``<``, ``&``, ``*``, ``@``) so escaping is part of the
cost.  Target: time per change at 1,000 at most 1.5x that at 100.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.common import alternate, fresh_heap

TARGET = 1.5
LARGE, SMALL = 1000, 100
# A vocabulary about as varied as an abstract's (word diffs cost more on repetitive
# text), hostile characters included.
_WORDS = [
    *"we show that the our a of in <scale> & *sparse* @cluster _under_ ~tilde~".split(),
    *(f"term{n}" for n in range(400)),
]


def events(count: int) -> list[Any]:
    """``count`` revised-paper events of one author, each a title and abstract change."""
    from syncd.domain.model import Event  # noqa: PLC0415
    from syncd.domain.record import Record  # noqa: PLC0415
    from syncd.domain.vocabulary import EventType  # noqa: PLC0415

    rng = random.Random(count)
    made = []
    start = datetime(2026, 12, 1, tzinfo=UTC)
    for n in range(count):
        title = " ".join(rng.choices(_WORDS, k=10))
        abstract = " ".join(rng.choices(_WORDS, k=150))
        new_title = title + " " + rng.choice(_WORDS)
        words = abstract.split()
        for position in rng.sample(range(len(words)), 5):
            words[position] = rng.choice(_WORDS)
        new_abstract = " ".join(words)
        arxiv_id = f"2601.{n:05d}"
        record = Record(arxiv_id=arxiv_id, version=2, title=new_title, abstract=new_abstract)
        made.append(
            Event(
                seq=n,
                id=f"evt_{n}",
                type=EventType.REVISED,
                created_at=start + timedelta(seconds=n),
                author="Zhida Jiang",
                paper_key=arxiv_id,
                arxiv_id=arxiv_id,
                kinds=("version", "title", "abstract"),
                changes={
                    "version": {"old": 1, "new": 2},
                    "title": {"old": title, "new": new_title},
                    "abstract": {"old": abstract, "new": new_abstract},
                },
                record=record,
            )
        )
    return made


def run(reps: int) -> dict[str, Any]:
    """Per format and grouping, the median ratio of time per change, 1,000 against 100."""
    from syncd.delivery.messages import message_body  # noqa: PLC0415
    from syncd.domain.vocabulary import DeliveryFormat  # noqa: PLC0415

    large, small = events(LARGE), events(SMALL)
    public_url = "https://syncd.example.org"
    points: dict[str, Any] = {}
    for fmt in (DeliveryFormat.SLACK, DeliveryFormat.DISCORD):

        def digest(batch: Sequence[Any], fmt: DeliveryFormat = fmt) -> int:
            return len(message_body(fmt, batch, public_url=public_url))

        def each(batch: Sequence[Any], fmt: DeliveryFormat = fmt) -> int:
            return sum(len(message_body(fmt, [e], public_url=public_url)) for e in batch)

        for grouping, render in (("digest", digest), ("event", each)):
            render(small)  # warm up
            paired = alternate(
                reps,
                lambda _i, render=render: _timed(lambda: render(large)),
                lambda _i, render=render: _timed(lambda: [render(small) for _ in range(10)]),
            )
            points[f"{fmt.value}_{grouping}"] = {
                "large_seconds_per_change": statistics.median(paired.syncd) / LARGE,
                "small_seconds_per_change": statistics.median(paired.baseline) / LARGE,
                "ratios": [round(r, 3) for r in paired.ratios],
                "ratio": round(paired.ratio, 3),
            }
    return {
        "changes": [LARGE, SMALL],
        "points": points,
        "target": f"<= {TARGET:g}x time per change",
        "met": all(p["ratio"] <= TARGET for p in points.values()),
    }


def _timed(fn: Callable[[], Any]) -> float:
    fresh_heap()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The rows of benchmarks.run's table."""
    out = []
    for name, point in result["points"].items():
        fmt, grouping = name.split("_")
        what = "one digest" if grouping == "digest" else "one message per change"
        out.append(
            (
                f"Digest render, {fmt}: {LARGE:,} changes, {what}",
                f"{point['large_seconds_per_change'] * 1e6:.1f} µs/change",
                f"{SMALL} changes: {point['small_seconds_per_change'] * 1e6:.1f} µs/change",
                f"{point['ratio']:.2f}x time/change",
                f"<= {TARGET:g}x",
                "yes" if point["ratio"] <= TARGET else "NO",
            )
        )
    return out
