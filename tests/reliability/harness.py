"""What the reliability runs share: the upstream script, the config syncd runs with,
scratch databases and the results table (what they check is in ``checks``).

``make reliability`` runs the full versions and prints the table;
``tests/reliability/test_reliability.py`` runs short ones in CI.
"""

from __future__ import annotations

import json
import math
import os
import random
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests import fakearxiv as fa
from tests import scenario
from tests.helpers import ROOT, WEBHOOK_SECRET

__all__ = [
    "AUTHOR",
    "POSTGRES_ADMIN_URL",
    "Change",
    "UpstreamScript",
    "announce",
    "author_pages",
    "connect",
    "format_table",
    "print_results",
    "scratch_database",
    "stock",
    "write_config",
    "write_result",
]

AUTHOR = scenario.AUTHOR
SEEDS = (
    scenario.SEEDS / "000_bae548b29664adf4.txt",
    scenario.SEEDS / "001_486f742ac3512806.txt",
)
POSTGRES_ADMIN_URL = os.environ.get(
    "SYNCD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)

# -- configuration ---------------------------------------------------------------------


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def write_config(
    path: Path,
    *,
    api_url: str,
    database_url: str,
    hook_url: str,
    sections: Mapping[str, Mapping[str, object]],
    more_hooks: Mapping[str, Mapping[str, object]] | None = None,
) -> Path:
    """Write a syncd config for the seeded author with one webhook; ``sections`` adds keys,
    ``more_hooks`` more ``[[webhooks]]`` (name -> keys)."""
    lines: list[str] = []
    merged: dict[str, dict[str, object]] = {
        "arxiv": {"api_url": api_url},
        "database": {"url": database_url, "key_file": str(path.parent / "url.key")},
        "log": {"level": "info", "format": "json"},
    }
    for name, values in sections.items():
        merged.setdefault(name, {}).update(values)
    for name, values in merged.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
        lines.append("")
    lines += [
        "[[authors]]",
        f"name = {_toml(AUTHOR)}",
        f"seeds = {_toml([str(s) for s in SEEDS])}",
        "",
        "[[webhooks]]",
        'name = "reliability"',
        f"url = {_toml(hook_url)}",
        f"secret = {_toml(WEBHOOK_SECRET)}",
        "timeout = 5.0",
        "",
    ]
    for name, values in (more_hooks or {}).items():
        lines += ["[[webhooks]]", f"name = {_toml(name)}"]
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# -- the scripted upstream ---------------------------------------------------------------


def stock(fake: fa.FakeArxiv) -> None:
    """Publish the seeded author's papers, as the integration tests' fake arXiv does."""
    for record in scenario.upstream_versions():
        fake.publish(record)


@dataclass(frozen=True, slots=True)
class Change:
    """One scripted upstream change; ``apply`` reads the fake's state, so replays agree."""

    kind: str  # version, amend, new, candidate, withdraw, remove
    arxiv_id: str
    detail: str = ""  # version: the field changed; amend: field=value

    @property
    def publishes_event(self) -> bool:
        """Whether the next good cycle publishes an event for it (a removal takes longer)."""
        return self.kind in ("version", "amend", "new", "withdraw")

    def apply(self, fake: fa.FakeArxiv) -> None:
        """Make the change on ``fake``."""
        if self.kind in ("new", "candidate"):
            number = int(self.arxiv_id.split(".")[1]) - 10000
            if self.kind == "new":  # shares a co-author: tracked, paper.added
                record = fa.make_record(
                    self.arxiv_id,
                    authors=(AUTHOR, "Zhaolong Xing", f"Reliability Coauthor{number}"),
                )
            else:  # shares nothing with the known papers: held as a candidate, no event
                record = fa.make_record(
                    self.arxiv_id,
                    authors=(AUTHOR, f"Stranger Number{number}"),
                    primary_category="astro-ph.CO",
                    categories=("astro-ph.CO",),
                )
            fake.publish(record)
        elif self.kind == "version":
            current = fake.current(self.arxiv_id)
            version = (current.version or 1) + 1
            if self.detail == "title":
                base = (current.title or "").split(" [rev ")[0]
                changed = replace(current, title=f"{base} [rev {version}]")
            else:
                base = (current.abstract or "").split(" Revision ")[0]
                changed = replace(current, abstract=f"{base} Revision {version} adds results.")
            fake.publish(replace(changed, version=version, updated=None))
        elif self.kind == "amend":
            name, _, value = self.detail.partition("=")
            fake.amend(self.arxiv_id, **{name: value})
        elif self.kind == "withdraw":
            fake.withdraw(self.arxiv_id)
        elif self.kind == "remove":
            fake.remove(self.arxiv_id)
        else:
            raise ValueError(f"unknown change {self.kind}")


_WEIGHTS = {"version": 4, "amend": 4, "new": 2, "candidate": 1, "withdraw": 1, "remove": 2}


class UpstreamScript:
    """A seeded, replayable list of steps, each one to three upstream changes.

    Every step has at least one change that publishes an event, and step 1
    removes a paper.  Changes in a step touch distinct papers; removed and
    withdrawn papers are left alone afterwards, so a removal is final and the
    comparison needs no timing.  New papers never arrive past version 1, so no
    cycle needs the ``id_list`` fetch of earlier versions (see
    docs/RELIABILITY.md).
    """

    def __init__(
        self, seed: int, *, max_papers: int = 20, max_removals: int = 2, max_withdrawals: int = 3
    ) -> None:
        self._rng = random.Random(seed)
        self._live = list(dict.fromkeys(r.arxiv_id or "" for r in scenario.upstream_versions()))
        self._max_papers = max_papers
        self._left = {"remove": max_removals, "withdraw": max_withdrawals}
        self._next = 10001
        self._amends = 0
        self._steps: list[tuple[Change, ...]] = []

    def step(self, index: int) -> tuple[Change, ...]:
        """The changes of step ``index`` (generated on first use, then remembered)."""
        while len(self._steps) <= index:
            self._steps.append(self._generate())
        return self._steps[index]

    def _generate(self) -> tuple[Change, ...]:
        rng = self._rng
        touched: set[str] = set()
        changes: list[Change] = []
        added: list[str] = []
        for position in range(rng.choice((1, 1, 2, 3))):
            kinds = list(_WEIGHTS)
            if position == 0:
                kinds = [k for k in kinds if k not in ("candidate", "remove")]
            kind = rng.choices(kinds, [_WEIGHTS[k] for k in kinds])[0]
            candidates = [p for p in self._live if p not in touched]
            if kind in ("new", "candidate") and len(self._live) + len(added) >= self._max_papers:
                kind = "version"
            if kind in self._left and (not self._left[kind] or len(self._live) < 6):
                kind = "amend"
            if kind not in ("new", "candidate") and not candidates:
                kind = "new"
            change = self._change(kind, candidates)
            changes.append(change)
            touched.add(change.arxiv_id)
            if kind == "new":
                added.append(change.arxiv_id)
            if kind in self._left:
                self._live.remove(change.arxiv_id)
                self._left[kind] -= 1
        spare = [p for p in self._live if p not in touched]
        if len(self._steps) == 1 and self._left["remove"] and spare:
            # An early removal, so short runs see paper.removed too.
            changes.append(Change("remove", rng.choice(spare)))
            self._live.remove(changes[-1].arxiv_id)
            self._left["remove"] -= 1
        self._live += added
        return tuple(changes)

    def _change(self, kind: str, candidates: Sequence[str]) -> Change:
        rng = self._rng
        if kind in ("new", "candidate"):
            arxiv_id = f"2607.{self._next:05d}"
            self._next += 1
            return Change(kind, arxiv_id)
        arxiv_id = rng.choice(candidates)
        if kind == "version":
            return Change(kind, arxiv_id, rng.choice(("title", "abstract")))
        if kind == "amend":
            self._amends += 1
            name = rng.choice(("journal_ref", "doi", "comment"))
            value = {
                "journal_ref": f"J. Reliab. Eng. {self._amends} (2026)",
                "doi": f"10.5555/reliability.{self._amends}",
                "comment": f"{self._amends + 8} pages, camera-ready",
            }[name]
            return Change(kind, arxiv_id, f"{name}={value}")
        return Change(kind, arxiv_id)


def author_pages(fake: fa.FakeArxiv, page_size: int) -> int:
    """How many search pages the author's query takes on ``fake`` now."""
    count = sum(1 for history in fake.papers.values() if AUTHOR in history[-1].authors)
    return max(1, math.ceil(count / page_size))


# -- databases ---------------------------------------------------------------------------


@contextmanager
def scratch_database(kind: str, directory: Path, name: str) -> Iterator[str]:
    """A new empty database of ``kind`` (``sqlite`` or ``postgresql``), dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / f'{name}.sqlite3'}"
        return
    if kind != "postgresql":
        raise ValueError(f"unknown database kind {kind!r}")
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    database = f"syncd_rel_{name}_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{database}"'))
        yield admin.url.set(database=database).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def connect(url: str) -> Iterator[sa.Connection]:
    """A short-lived connection that leaves no pool behind."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


# -- results -----------------------------------------------------------------------------

COLUMNS = (
    ("family", "family"),
    ("database", "database"),
    ("trials", "trials"),
    ("faults injected", "faults"),
    ("events expected", "expected"),
    ("delivered", "delivered"),
    ("lost", "lost"),
    ("duplicated (distinct ids)", "duplicated"),
    ("false", "false"),
    ("redelivered (same id)", "redelivered"),
    ("time (s)", "seconds"),
)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The results as a Markdown table, one row per family and database."""
    lines = [
        "| " + " | ".join(title for title, _ in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    for row in rows:
        cells = [str(row.get("row", row).get(key, "")) for _, key in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_result(directory: Path, result: Mapping[str, Any]) -> Path:
    """Write one run's result as JSON under ``directory``; return the file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result['row']['family']}-{result['row']['database']}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    return path


def announce(directory: Path, result: Mapping[str, Any]) -> None:
    """Write ``result`` under ``directory``; print its table row and whether it passed."""
    path = write_result(directory, result)
    print(format_table([result]), flush=True)
    print(f"{'OK' if result['ok'] else 'FAILED'}: {path}", flush=True)


def load_results(directory: Path) -> list[dict[str, Any]]:
    """Every result JSON under ``directory``, torture first."""
    results = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    return sorted(results, key=lambda r: (r["row"]["family"] != "torture", r["row"]["database"]))


def print_results(directory: str | Path = ROOT / "build" / "reliability") -> None:
    """Print the table of every result under ``directory``."""
    print(format_table(load_results(Path(directory))))
