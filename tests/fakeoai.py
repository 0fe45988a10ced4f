"""The fake arXiv's OAI-PMH endpoint: ``ListRecords`` in ``arXivRaw`` from its own world.

Every paper the fake holds has a datestamp: the fake's ``oai_date`` when it
was last published, revised, amended or withdrawn.  ``ListRecords`` answers
the papers whose datestamp is on or after ``from`` and that belong to
``set`` (derived from their categories: ``cs.LG`` is in ``cs`` and
``cs:cs:LG``, ``hep-th`` in ``physics`` and ``physics:hep-th``), in id order,
``page_size`` at a time with resumption tokens.  A token names its list and
offset and the fake's token generation: ``expire_tokens()`` makes every
issued token a ``badResumptionToken``, as arXiv's expire daily.  Nothing
matching is ``noRecordsMatch``; an unknown set or argument ``badArgument``.

The text is written as submitters type it and arXivRaw carries it, accents
in TeX, and the categories as arXiv files them, aliases too
(``tests.recorded``): a harvest always meets what syncd must read back.

Faults are the fake's own (``status(503, retry_after=...)``, ``truncate()``,
``body(...)`` with malformed or hostile XML), taken by OAI requests when their
``when`` matches (``is_oai`` picks them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import format_datetime

from syncd.domain.record import Record
from tests.oaixml import RawPaper, RawVersionXml, error_xml, list_records_xml
from tests.recorded import as_tex, with_aliases

__all__ = ["OAI_CONTENT_TYPE", "OAI_PATH", "OaiWorld", "is_oai", "paper_sets"]

OAI_PATH = "/oai"
OAI_CONTENT_TYPE = "text/xml; charset=utf-8"

# arXiv's groups and, for physics, its archives (ListSets).
_GROUPS = frozenset({"cs", "econ", "eess", "math", "physics", "q-bio", "q-fin", "stat"})
_PHYSICS_ARCHIVES = frozenset(
    {
        *("astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th"),
        *("math-ph", "nlin", "nucl-ex", "nucl-th", "physics", "quant-ph"),
    }
)


def is_oai(params: Mapping[str, str]) -> bool:
    """A fault's ``when`` for OAI-PMH requests only."""
    return "verb" in params


def paper_sets(categories: Sequence[str]) -> tuple[str, ...]:
    """The setSpecs of a paper in ``categories``, from the widest to the narrowest."""
    specs: list[str] = []
    for category in categories:
        archive, _, sub = category.partition(".")
        if archive in _PHYSICS_ARCHIVES:
            found = ["physics", f"physics:{archive}"]
        elif archive in _GROUPS:
            found = [archive, f"{archive}:{archive}:{sub}"] if sub else [archive]
        else:
            continue
        specs += [spec for spec in found if spec not in specs]
    return tuple(specs)


def _version_xml(record: Record) -> RawVersionXml:
    moment = datetime.fromisoformat((record.updated or "").replace("Z", "+00:00"))
    when = format_datetime(moment.astimezone(UTC), usegmt=True)
    if record.withdrawn:
        return RawVersionXml(date=when, size="0kb", source_type="I")
    return RawVersionXml(date=when, size=f"{100 + (record.version or 0)}kb")


def _authors(names: Sequence[str]) -> str:
    """The names as a submitter types them: "A, B and C", accents in TeX."""
    typed = [as_tex(name) or name for name in names]
    if len(typed) < 2:
        return "".join(typed)
    return ", ".join(typed[:-1]) + " and " + typed[-1]


Wrap = Callable[[str | None], str | None]


def raw_paper(history: Sequence[Record], datestamp: date, wrap: tuple[Wrap, Wrap]) -> RawPaper:
    """A paper's versions as its arXivRaw record: the latest's metadata, each version's facts.

    ``wrap`` hard-wraps the title and the abstract, as arXivRaw does; the
    text is written as its submitter typed it, accents in TeX (``as_tex``),
    and the categories as arXiv files them (``with_aliases``).
    """
    wrap_title, wrap_abstract = wrap
    latest = history[-1]
    categories = with_aliases(
        tuple(dict.fromkeys([*filter(None, [latest.primary_category]), *latest.categories]))
    )
    return RawPaper(
        arxiv_id=latest.arxiv_id or "",
        datestamp=datestamp.isoformat(),
        title=wrap_title(as_tex(latest.title)) or "",
        authors=_authors(latest.authors),
        abstract=wrap_abstract(as_tex(latest.abstract)),
        categories=" ".join(categories),
        comments=as_tex(latest.comment),
        journal_ref=as_tex(latest.journal_ref),
        doi=latest.doi,
        versions=tuple(map(_version_xml, history)),
        sets=paper_sets(categories),
    )


@dataclass(frozen=True)
class _Token:
    since: str
    set_spec: str
    offset: int
    generation: int

    def text(self) -> str:
        return f"{self.since}|{self.set_spec}|{self.offset}|{self.generation}"

    @classmethod
    def read(cls, text: str) -> _Token | None:
        parts = text.split("|")
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]), int(parts[3]))


class OaiWorld:
    """The OAI-PMH side of the fake: datestamps, paging and tokens (the fake holds the lock)."""

    def __init__(self, today: date, wrap: tuple[Wrap, Wrap]) -> None:
        self.today = today
        self.page_size = 3
        # The 2015 service's token counts (cursor, completeListSize); arXiv's 2025 writes neither.
        self.counts = False
        self.generation = 0
        self.wrap = wrap
        self.datestamps: dict[str, date] = {}

    def expire_tokens(self) -> None:
        """Every token issued so far is refused from now on (arXiv's expire daily)."""
        self.generation += 1

    def touch(self, arxiv_id: str) -> None:
        """The paper changed today: its datestamp moves."""
        self.datestamps[arxiv_id] = self.today

    def answer(
        self, params: Mapping[str, str], papers: Mapping[str, Sequence[Record]]
    ) -> tuple[int, bytes]:
        """The status and body of one OAI-PMH request over ``papers`` (id -> versions)."""
        stamp = f"{self.today.isoformat()}T12:00:00Z"
        if params.get("verb") != "ListRecords":
            return 200, error_xml("badVerb", "only ListRecords here", response_date=stamp)
        token_text = params.get("resumptionToken")
        if token_text is not None:
            token = _Token.read(token_text)
            if set(params) != {"verb", "resumptionToken"}:
                return 200, error_xml(
                    "badArgument", "resumptionToken is exclusive", response_date=stamp
                )
            if token is None or token.generation != self.generation:
                message = "The resumptionToken supplied is illegal for this repository"
                return 200, error_xml("badResumptionToken", message, response_date=stamp)
        else:
            problem = self._check(params)
            if problem is not None:
                return 200, error_xml("badArgument", problem, response_date=stamp)
            token = _Token(params.get("from", ""), params.get("set", ""), 0, self.generation)
        listed = self._listed(token, papers)
        if not listed:
            return 200, error_xml("noRecordsMatch", "no records", response_date=stamp)
        page = listed[token.offset : token.offset + self.page_size]
        end = token.offset + len(page)
        following = _Token(token.since, token.set_spec, end, self.generation)
        records = [raw_paper(papers[i], self.datestamps[i], self.wrap) for i in page]
        body = list_records_xml(
            records,
            token=following.text() if end < len(listed) else None,
            response_date=stamp,
            cursor=token.offset if self.counts else None,
            complete_list_size=len(listed) if self.counts else None,
        )
        return 200, body

    def _check(self, params: Mapping[str, str]) -> str | None:
        if params.get("metadataPrefix") != "arXivRaw":
            return "metadataPrefix must be arXivRaw here"
        if "until" in params:
            return "the fake refuses until: harvesters should not send it"
        since = params.get("from")
        if since is not None:
            try:
                date.fromisoformat(since)
            except ValueError:
                return f"from {since!r} is not a date (YYYY-MM-DD)"
            if len(since) != 10:
                return f"from {since!r} is not a date (YYYY-MM-DD)"
        spec = params.get("set")
        if spec is not None and spec.split(":")[0] not in _GROUPS:
            return f"unknown set {spec!r}"
        return None

    def _listed(self, token: _Token, papers: Mapping[str, Sequence[Record]]) -> list[str]:
        since = date.fromisoformat(token.since) if token.since else None
        listed = []
        for arxiv_id in sorted(papers):
            stamp = self.datestamps.get(arxiv_id)
            if stamp is None or (since is not None and stamp < since):
                continue
            latest = papers[arxiv_id][-1]
            filed = (*filter(None, [latest.primary_category]), *latest.categories)
            sets = paper_sets(with_aliases(filed))
            if token.set_spec and not any(
                s == token.set_spec or s.startswith(token.set_spec + ":") for s in sets
            ):
                continue
            listed.append(arxiv_id)
        return listed
