"""Readers of syncd's exports that are not their writers: what the tests read them back with.

- BibTeX: parsed by pybtex (not bibtexparser, which writes it), its fields'
  TeX read as text by pylatexenc, which is told what LaTeX's
  ``\\textasciicircum``, ``\\textasciitilde``, ``\\textbackslash``,
  ``\\textbraceleft`` and ``\\textbraceright`` print.
- CSL-JSON: read and rendered by citeproc-py with a style it ships.
- RIS: a strict parser written here from the format's specification (not
  rispy, which writes it): ``TY`` first, ``ER`` last, every line ``XX  - value``
  ended by CRLF, nothing else.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON
from pybtex.database import parse_string
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

__all__ = ["BibEntry", "read_bibtex", "read_ris", "render_csl", "ris_name"]

_CONTEXT = get_default_latex_context_db()
_CONTEXT.add_context_category(
    "ascii-symbols",
    prepend=True,
    macros=[
        MacroTextSpec("textasciicircum", "^"),
        MacroTextSpec("textasciitilde", "~"),
        MacroTextSpec("textbackslash", "\\"),
        MacroTextSpec("textbraceleft", "{"),
        MacroTextSpec("textbraceright", "}"),
    ],
)
_LATEX = LatexNodes2Text(latex_context=_CONTEXT, math_mode="verbatim", strict_latex_spaces=True)
_RIS_LINE = re.compile(r"(?P<tag>[A-Z][A-Z0-9])  - (?P<value>.*)")
# A style citeproc-py ships: rendering needs nothing from the network.
CSL_STYLE = "harvard-cite-them-right"


def tex_text(tex: str) -> str:
    """What LaTeX prints for ``tex``."""
    return str(_LATEX.latex_to_text(tex))


@dataclass(frozen=True)
class BibEntry:
    """One entry as pybtex reads it: its type, fields as text, and its authors' names."""

    type: str
    fields: dict[str, str]
    raw: dict[str, str]
    authors: list[str]  # each name whole, its parts in "First von Last Jr" order
    families: list[str]  # each name's "von Last"


def read_bibtex(text: str) -> dict[str, BibEntry]:
    """The entries of ``text`` by key, as pybtex parses them (strictly: an error raises)."""
    data = parse_string(text, "bibtex")
    entries: dict[str, BibEntry] = {}
    for key, entry in data.entries.items():
        persons = entry.persons.get("author", [])
        authors = [
            tex_text(
                " ".join(
                    [
                        *p.first_names,
                        *p.middle_names,
                        *p.prelast_names,
                        *p.last_names,
                        *p.lineage_names,
                    ]
                )
            )
            for p in persons
        ]
        families = [tex_text(" ".join([*p.prelast_names, *p.last_names])) for p in persons]
        fields = {name: tex_text(value) for name, value in entry.fields.items()}
        entries[key] = BibEntry(entry.type, fields, dict(entry.fields), authors, families)
    return entries


def render_csl(text: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The items of a CSL-JSON export, and each one's bibliography entry rendered by
    citeproc-py in ``CSL_STYLE``, by id."""
    items = json.loads(text)
    source = CiteProcJSON(items)
    style = CitationStylesStyle(CSL_STYLE, validate=False)
    rendered: dict[str, str] = {}
    for item in items:
        bibliography = CitationStylesBibliography(style, source, formatter.plain)
        bibliography.register(Citation([CitationItem(item["id"])]))
        (entry,) = bibliography.bibliography()
        rendered[item["id"]] = str(entry)
    return items, rendered


def read_ris(text: str) -> list[dict[str, list[str]]]:
    """The records of a RIS export, each a dict of tag to values; AssertionError on any line
    the specification does not allow."""
    assert text.endswith("\r\n"), "a RIS file ends with a line end"
    records: list[dict[str, list[str]]] = []
    current: dict[str, list[str]] | None = None
    for number, line in enumerate(text[: -len("\r\n")].split("\r\n"), 1):
        if line == "" and current is None:
            continue  # between records
        match = _RIS_LINE.fullmatch(line)
        assert match is not None, f"line {number} is not a RIS tag line: {line!r}"
        tag, value = match["tag"], match["value"]
        if current is None:
            assert tag == "TY", f"line {number}: a record starts with TY, not {tag}"
            current = {}
        if tag == "ER":
            assert value == "", f"line {number}: ER has no value"
            records.append(current)
            current = None
            continue
        assert tag != "TY" or not current, f"line {number}: TY inside a record"
        current.setdefault(tag, []).append(value)
    assert current is None, "the last record has no ER"
    return records


def ris_name(value: str) -> str:
    """A RIS ``AU`` ("Last, First, Suffix", or a name whole) as the name reads."""
    parts = value.split(", ")
    if len(parts) == 1:
        return value
    return " ".join([*parts[1:2], parts[0], *parts[2:]])
