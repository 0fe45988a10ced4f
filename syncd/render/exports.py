"""Papers written out for reference managers and CVs: BibTeX, CSL-JSON and RIS.

Which papers, their keys and their names' parts are decided in
``syncd.domain.citations``; this module only writes them, each format with a
maintained library where there is one (BibTeX by bibtexparser 2, RIS by
rispy; CSL-JSON is JSON).  The stored text is already Unicode without TeX
(``syncd.domain.tex``) and stays Unicode in every format:

- **BibTeX** is written in UTF-8, with the characters TeX gives a meaning
  (``\\ { } % & $ # _ ^ ~``) escaped, so a title reads in LaTeX as it reads
  on arXiv; a title is braced whole, so that no style lower-cases its
  acronyms.  Each entry is a ``@misc`` as arXiv's own export writes it
  (``eprint``, ``archivePrefix``, ``primaryClass``), with the latest
  ``version``, the ``doi``, the journal reference (as ``journal``, which
  reference managers import, and ``howpublished``, which ``@misc`` styles
  print) and a withdrawn paper's ``note``.
- **CSL-JSON** items are ``article``s in the ``arXiv`` archive, their
  ``number`` the arXiv id, their names in CSL's parts.
- **RIS** records are ``UNPB`` (``JOUR`` with a journal reference), one tag a
  line, CRLF as the format's specification asks.

The year and month are those of the paper's first version; everything else
is its latest version's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import rispy
from bibtexparser import model
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library

from syncd.domain.citations import (
    Cited,
    ExportFormat,
    PersonName,
    first_version_date,
    person_name,
    withdrawal_note,
)
from syncd.domain.model import Paper
from syncd.domain.record import Record

__all__ = ["bibtex", "csl_json", "export", "ris"]

_ABS = "https://arxiv.org/abs/"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# What TeX reads as markup, written so that it reads as the character itself.  Braces by
# name: BibTeX counts a brace after a backslash too, so one "\{" would end the file's
# balance.
_TEX_SPECIALS = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "%": r"\%",
        "&": r"\&",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "^": r"\textasciicircum{}",
        "~": r"\textasciitilde{}",
    }
)

# Pairs TeX fonts join into another character ("--" a dash, "``" a quote, "?`" an
# inverted question mark, "<<" a guillemet): an empty group between them keeps both.
_LIGATURE = re.compile(
    r"(?<=-)(?=-)|(?<=`)(?=`)|(?<=')(?=')|(?<=[?!])(?=`)|(?<=<)(?=<)|(?<=>)(?=>)|(?<=,)(?=,)"
)
_UNQUOTABLE = frozenset("{}\\")


def export(papers: Sequence[Cited], form: ExportFormat) -> str:
    """``papers`` written in ``form``, in their order, under their keys."""
    return _WRITERS[form](papers)


def _tex(text: str) -> str:
    """``text`` as TeX reads it back: its special characters escaped, its ligatures broken."""
    return _LIGATURE.sub("{}", text.translate(_TEX_SPECIALS))


def _bibtex_name(name: PersonName) -> str:
    """One name of a BibTeX author list: "von Last, Jr, First", or the whole name braced."""
    if name.literal:
        return "{" + _tex(name.literal) + "}"
    last = " ".join(part for part in (name.particle, name.family) if part)
    parts = [last, name.suffix, name.given] if name.suffix else [last, name.given]
    return ", ".join(_tex(part) for part in parts)


def _bibtex_fields(paper: Paper) -> list[model.Field]:
    record = paper.record
    fields: list[model.Field] = []

    def add(key: str, value: object | None, enclosing: str | None = None) -> None:
        if value is not None:
            fields.append(model.Field(key, value, enclosing=enclosing))

    if record.authors:
        names = (_bibtex_name(person_name(author)) for author in record.authors)
        add("author", " and ".join(names))
    add("title", "{" + _tex(record.title) + "}" if record.title else None)
    day = first_version_date(record)
    if day is not None:
        add("year", day.year)
        add("month", _MONTHS[day.month - 1], enclosing="no-enclosing")  # the month's macro
    if paper.arxiv_id is not None:
        add("eprint", paper.arxiv_id)
        add("archivePrefix", "arXiv")
        add("primaryClass", _tex(record.primary_category) if record.primary_category else None)
        add("version", record.version)
    # Verbatim in biblatex, like the url: escaped, it would point elsewhere.  No DOI has a
    # brace or a backslash; one that did would end the field early.
    add("doi", record.doi if record.doi and not _UNQUOTABLE & set(record.doi) else None)
    if record.journal_ref is not None:
        add("journal", _tex(record.journal_ref))
        add("howpublished", _tex(record.journal_ref))
    note = withdrawal_note(record)
    add("note", _tex(note) if note else None)
    add("url", _url(paper))
    return fields


def bibtex(papers: Sequence[Cited]) -> str:
    """``papers`` as BibTeX ``@misc`` entries."""
    library = Library()
    library.add([model.Entry("misc", c.key, _bibtex_fields(c.paper)) for c in papers])
    return write_string(library)


def _csl_name(name: PersonName) -> dict[str, str]:
    if name.literal:
        return {"literal": name.literal}
    parts = {
        "family": name.family,
        "given": name.given,
        "non-dropping-particle": name.particle,
        "suffix": name.suffix,
    }
    return {key: value for key, value in parts.items() if value}


def _csl_item(key: str, paper: Paper) -> dict[str, Any]:
    record = paper.record
    item: dict[str, Any] = {"id": key, "type": "article"}
    candidates: dict[str, Any] = {
        "title": record.title,
        "author": [_csl_name(person_name(a)) for a in record.authors] or None,
        "archive": "arXiv" if paper.arxiv_id else None,
        "number": paper.arxiv_id,
        "version": str(record.version) if record.version is not None else None,
        "URL": _url(paper),
        "DOI": record.doi,
        "container-title": record.journal_ref,
        "abstract": record.abstract,
        "note": withdrawal_note(record),
    }
    day = first_version_date(record)
    if day is not None:
        candidates["issued"] = {"date-parts": [[day.year, day.month, day.day]]}
    item |= {key: value for key, value in candidates.items() if value is not None}
    return item


def csl_json(papers: Sequence[Cited]) -> str:
    """``papers`` as one CSL-JSON array of items."""
    items = [_csl_item(c.key, c.paper) for c in papers]
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


class _RisWriter(rispy.RisWriter):  # type: ignore[misc]  # rispy has no types
    """rispy's writer without the reference number it puts before each record (no RIS tag),
    and with the CRLF the format's specification asks for."""

    NEWLINE = "\r\n"

    def set_header(self, count: int) -> str:
        return ""


def _ris_name(name: PersonName) -> str:
    """One ``AU``: "Last, First, Suffix" (the particle with the family name), or the name."""
    if name.literal:
        return name.literal
    last = " ".join(part for part in (name.particle, name.family) if part)
    return ", ".join(part for part in (last, name.given, name.suffix) if part)


def _ris_record(key: str, paper: Paper) -> dict[str, Any]:
    record = paper.record
    candidates: dict[str, Any] = {
        "type_of_reference": "JOUR" if record.journal_ref else "UNPB",
        "id": key,
        "title": record.title,
        "authors": [_ris_name(person_name(a)) for a in record.authors] or None,
        "journal_name": record.journal_ref,
        "doi": record.doi,
        "urls": [_url(paper)] if paper.arxiv_id else None,
        "name_of_database": "arXiv" if paper.arxiv_id else None,
        "accession_number": f"arXiv:{paper.arxiv_id}" if paper.arxiv_id else None,
        "edition": f"v{record.version}" if record.version is not None else None,
        "keywords": list(_categories(record)) or None,
        "abstract": record.abstract,
        "notes": [note] if (note := withdrawal_note(record)) else None,
    }
    day = first_version_date(record)
    if day is not None:
        candidates["year"] = str(day.year)
        candidates["date"] = f"{day.year:04}/{day.month:02}/{day.day:02}/"
    return {key: _one_line(value) for key, value in candidates.items() if value is not None}


def _one_line(value: Any) -> Any:
    """A RIS value on one line: a tag line ends at the first line break."""
    if isinstance(value, list):
        return [_one_line(item) for item in value]
    return " ".join(str(value).splitlines())


def ris(papers: Sequence[Cited]) -> str:
    """``papers`` as RIS records."""
    records = [_ris_record(c.key, c.paper) for c in papers]
    written: str = rispy.dumps(records, implementation=_RisWriter)
    return written


def _categories(record: Record) -> tuple[str, ...]:
    primary = (record.primary_category,) if record.primary_category else ()
    return (*primary, *(c for c in record.categories if c != record.primary_category))


def _url(paper: Paper) -> str | None:
    return f"{_ABS}{paper.arxiv_id}" if paper.arxiv_id else None


_WRITERS: dict[ExportFormat, Callable[[Sequence[Cited]], str]] = {
    ExportFormat.BIBTEX: bibtex,
    ExportFormat.CSL_JSON: csl_json,
    ExportFormat.RIS: ris,
}
