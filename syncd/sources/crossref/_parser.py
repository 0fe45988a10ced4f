"""Turn Crossref's REST API answers (JSON) into works, links to preprints and notices.

Suspicious as the arXiv parser is: a body that is not JSON, not Crossref's
envelope (``status: ok`` and the expected ``message-type``) or not shaped as
its works are raises ``PublicationSourceError`` and nothing of it is used; an
item of a list that makes no sense (no DOI, no title, a field of the wrong
type, an absurdly long string) is skipped with a log line, and the others
are read.  Titles carry JATS or HTML markup (``<i>``, ``<sub>``,
``<scp>``): it is stripped to text.

Crossref lists a preprint relation on the publication as ``has-preprint``,
whichever side asserted it: a preprint's own ``is-preprint-of`` shows on the
publication as ``has-preprint`` asserted by the ``object``.  arXiv's papers
are named by their DataCite DOI (``id-type: doi``, ``10.48550/arXiv.<id>``)
or by their bare id (``id-type: arxiv``, sometimes ``arXiv:<id>v2``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import structlog

from syncd.domain.publications import (
    LinkedWork,
    Notice,
    PublicationSource,
    Work,
    normalize_doi,
)
from syncd.domain.record import pasted_arxiv_id
from syncd.errors import PublicationSourceError

__all__ = [
    "ARXIV_DOI_PREFIX",
    "HOW_ARXIV_ID",
    "HOW_DOI",
    "WorkList",
    "clean_title",
    "linked_works",
    "notice_targets",
    "parse_json",
    "parse_work_list",
    "readable_works",
    "work_from_item",
]

_log = structlog.get_logger(__name__)

ARXIV_DOI_PREFIX = "10.48550/arxiv."
HOW_DOI = "crossref-relation-doi"
HOW_ARXIV_ID = "crossref-relation-arxiv-id"

# Longer than any title, name or venue a publisher deposits; past it an item is refused.
_MAX_TITLE = 2000
_MAX_NAME = 300
_MAX_AUTHORS = 5000
# Updates that are not notices on the published version: a new version or
# edition of the work itself (PLOS lists each article as its own new_version).
_NOT_NOTICES = frozenset({"new_version", "new_edition"})
# Works that are preprints themselves, never a published version of one.
_PREPRINT_TYPES = frozenset({"posted-content"})

_TAG = re.compile(r"<[^<>]{0,500}>")
_SPACE = re.compile(r"\s+")


class _BadItem(ValueError):
    """An item of a list that cannot be read; it is skipped."""


def parse_json(body: bytes) -> Any:
    """The JSON value of ``body``; ``PublicationSourceError`` when it is none."""
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PublicationSourceError(f"Crossref's answer is not JSON: {exc}"[:300]) from exc


def _message(body: bytes, message_type: str) -> dict[str, Any]:
    """Crossref's envelope around the answer: ``{"status": "ok", "message-type": ...}``."""
    value = parse_json(body)
    if not isinstance(value, dict):
        raise PublicationSourceError("Crossref's answer is not a JSON object")
    if value.get("status") != "ok" or value.get("message-type") != message_type:
        status = str(value.get("status"))[:40]
        kind = str(value.get("message-type"))[:40]
        raise PublicationSourceError(
            f"Crossref answered status {status!r}, message-type {kind!r};"
            f" expected 'ok', {message_type!r}"
        )
    message = value.get("message")
    if not isinstance(message, dict):
        raise PublicationSourceError("Crossref's answer has no message object")
    return message


class WorkList:
    """One page of a ``/works`` list: its items (objects) and how many there are in all."""

    __slots__ = ("items", "total")

    def __init__(self, items: list[dict[str, Any]], total: int) -> None:
        self.items = items
        self.total = total


def parse_work_list(body: bytes) -> WorkList:
    """A ``work-list`` answer's page; items that are not objects are skipped with a log line."""
    message = _message(body, "work-list")
    items = message.get("items")
    total = message.get("total-results")
    if not isinstance(items, list):
        raise PublicationSourceError("Crossref's work list has no list of items")
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        raise PublicationSourceError("Crossref's work list has no count of its results")
    objects = [item for item in items if isinstance(item, dict)]
    if len(objects) < len(items):
        _log.warning(
            "crossref_item_skipped", reason="not an object", count=len(items) - len(objects)
        )
    return WorkList(objects, total)


def clean_title(value: str) -> str:
    """A title as text: JATS/HTML tags dropped, entities read, white space collapsed."""
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", value))).strip()


def _text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise _BadItem(f"{field} is not text")
    if len(value) > limit:
        raise _BadItem(f"{field} is {len(value)} characters long")
    return value


def _first_text(item: Mapping[str, Any], field: str, limit: int) -> str | None:
    """The first string of a Crossref list field (``title``, ``container-title``), cleaned."""
    values = item.get(field)
    if values is None:
        return None
    if not isinstance(values, list):
        raise _BadItem(f"{field} is not a list")
    for value in values:
        text = clean_title(_text(value, field, limit))
        if text:
            return text
    return None


def _authors(item: Mapping[str, Any]) -> tuple[str, ...]:
    people = item.get("author", [])
    if not isinstance(people, list) or len(people) > _MAX_AUTHORS:
        raise _BadItem("author is not a list of people")
    names: list[str] = []
    for person in people:
        if not isinstance(person, dict):
            raise _BadItem("an author is not an object")
        parts = [
            _text(person[key], key, _MAX_NAME)
            for key in ("given", "family")
            if person.get(key) is not None
        ]
        if not parts and person.get("name") is not None:  # an organisation
            parts = [_text(person["name"], "name", _MAX_NAME)]
        name = clean_title(" ".join(parts))
        if name:
            names.append(name)
    return tuple(names)


def _date(value: object) -> tuple[int | None, str | None]:
    """Year and ISO date of a Crossref date (``{"date-parts": [[2024, 5, 8]]}``)."""
    if value is None:
        return None, None
    parts = value.get("date-parts") if isinstance(value, dict) else None
    if not isinstance(parts, list) or not parts or not isinstance(parts[0], list):
        raise _BadItem("a date has no date-parts")
    numbers = parts[0][:3]
    if not numbers or numbers[0] is None:  # Crossref writes [[null]] for an unknown date
        return None, None
    limits = ((1000, 2999), (1, 12), (1, 31))
    for number, (low, high) in zip(numbers, limits, strict=False):
        if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
            raise _BadItem("a date part is out of range")
    widths = (4, 2, 2)
    iso = "-".join(f"{n:0{w}d}" for n, w in zip(numbers, widths, strict=False))
    return numbers[0], iso


def _work_date(item: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """When it was published: ``published`` (print or online, the earlier), else ``issued``."""
    for field in ("published", "issued", "published-print", "published-online"):
        year, iso = _date(item.get(field))
        if year is not None:
            return year, iso
    return None, None


def _updates(entries: object, field: str) -> list[tuple[str, str, str | None, str]]:
    """The entries of an ``updated-by`` or ``update-to`` list that are notices: the DOI each
    names, its update type, date and source."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise _BadItem(f"{field} is not a list")
    updates = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise _BadItem(f"an entry of {field} is not an object")
        kind = _text(entry.get("type"), f"{field} type", 100).strip().lower()
        doi = normalize_doi(_text(entry.get("DOI"), f"{field} DOI", 500))
        source = entry.get("source")
        source = _text(source, f"{field} source", 100) if source is not None else "publisher"
        if doi is None or kind in _NOT_NOTICES:
            continue
        updates.append((doi, kind, _date(entry.get("updated"))[1], source))
    return updates


def work_from_item(item: Mapping[str, Any]) -> Work:
    """The ``Work`` an item describes; ``ValueError`` when it cannot be read."""
    doi = normalize_doi(_text(item.get("DOI"), "DOI", 500))
    if doi is None:
        raise _BadItem("DOI is not a DOI")
    title = _first_text(item, "title", _MAX_TITLE)
    if not title:
        raise _BadItem("it has no title")
    year, date = _work_date(item)
    url = item.get("URL")
    return Work(
        source=PublicationSource.CROSSREF,
        doi=doi,
        title=title,
        authors=_authors(item),
        year=year,
        date=date,
        venue=_first_text(item, "container-title", _MAX_TITLE),
        type=_text(item["type"], "type", 100) if item.get("type") is not None else None,
        url=_text(url, "URL", 2000) if url is not None else f"https://doi.org/{doi}",
        notices=tuple(
            Notice(doi=notice, type=kind, date=date, source=source, target_doi=doi)
            for notice, kind, date, source in _updates(item.get("updated-by"), "updated-by")
            if notice != doi
        ),
    )


def readable_works(items: Iterable[Mapping[str, Any]]) -> list[Work]:
    """The works of ``items`` that are published versions; the rest skipped with a log line."""
    works = []
    for item in items:
        try:
            work = work_from_item(item)
        except ValueError as exc:
            _log.warning("crossref_item_skipped", doi=str(item.get("DOI"))[:200], reason=str(exc))
            continue
        if work.type in _PREPRINT_TYPES:
            continue
        works.append(work)
    return works


def _named_id(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """The arXiv id (lower case, no version) a relation entry names, and how; else None."""
    kind, value = entry.get("id-type"), entry.get("id")
    if not isinstance(value, str) or len(value) > 500 or not isinstance(kind, str):
        return None
    if kind.lower() == "doi":
        doi = normalize_doi(value)
        if doi is None or not doi.startswith(ARXIV_DOI_PREFIX):
            return None
        named = pasted_arxiv_id(doi[len(ARXIV_DOI_PREFIX) :])
        return (named.lower(), HOW_DOI) if named else None
    if kind.lower() == "arxiv":
        named = pasted_arxiv_id(value)
        return (named.lower(), HOW_ARXIV_ID) if named else None
    return None


def linked_works(items: Iterable[Mapping[str, Any]], arxiv_ids: Sequence[str]) -> list[LinkedWork]:
    """The works of ``items`` whose ``has-preprint`` names one of ``arxiv_ids`` (bare ids),
    one ``LinkedWork`` per id and work, the DOI form first when both name it."""
    wanted = {arxiv_id.lower(): arxiv_id for arxiv_id in arxiv_ids}
    found: dict[tuple[str, str], LinkedWork] = {}
    items = list(items)
    by_doi = {work.doi: work for work in readable_works(items)}
    for item in items:
        relation = item.get("relation")
        entries = relation.get("has-preprint") if isinstance(relation, dict) else None
        doi = normalize_doi(str(item.get("DOI", ""))[:500])
        work = by_doi.get(doi) if doi is not None else None
        if work is None or not isinstance(entries, list):
            continue
        for entry in entries:
            named = _named_id(entry) if isinstance(entry, dict) else None
            if named is None or named[0] not in wanted:
                continue
            arxiv_id = wanted[named[0]]
            key = (arxiv_id, work.doi or "")
            if key not in found or named[1] == HOW_DOI:
                found[key] = LinkedWork(arxiv_id=arxiv_id, work=work, how=named[1])
    return list(found.values())


def notice_targets(items: Iterable[Mapping[str, Any]], dois: Collection[str]) -> list[Notice]:
    """The notices of ``items`` (their ``update-to``) on any of ``dois`` (normalised)."""
    notices: dict[tuple[str, str], Notice] = {}
    for item in items:
        try:
            notice_doi = normalize_doi(_text(item.get("DOI"), "DOI", 500))
            updates = _updates(item.get("update-to"), "update-to")
        except ValueError as exc:
            _log.warning("crossref_item_skipped", doi=str(item.get("DOI"))[:200], reason=str(exc))
            continue
        for target, kind, date, source in updates:
            if notice_doi is not None and target in dois and notice_doi != target:
                notice = Notice(
                    doi=notice_doi, type=kind, date=date, source=source, target_doi=target
                )
                notices.setdefault((notice.doi, target), notice)
    return list(notices.values())
