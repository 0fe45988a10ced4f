# ruff: noqa: RUF001 -- Greek and other non-Latin letters are what is converted
"""TeX in arXiv's text reads as arXiv's own ``tex2utf`` writes it: accents, letters, Greek."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree

from syncd.domain.record import normalize_text
from syncd.domain.tex import _CONVERTIBLE_RE, _converted, tex_to_utf8
from tests.hypothesis_profiles import examples

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv-real"
REAL = CORPUS / "oai"
ORACLE = CORPUS / "oracle"

# (case, TeX as a submitter writes it, what arXiv's API and ``arXiv`` OAI format write)
CASES = [
    ("acute", r"Jos\'e", "José"),
    ("braced letter", r"Jos\'{e}", "José"),
    ("braces around a command stay", r"Pl{\"o}tz", "Pl{ö}tz"),
    ("umlaut", r"Pl\"otz", "Plötz"),
    ("caron needs braces", r"Li\v{s}ka", "Liška"),
    ("double acute", r"Cs\"org\H{o}", "Csörgő"),
    ("cedilla", r"Fran\c{c}ois", "François"),
    ("ring letter", r"H. -{\AA}. Gustafsson", "H. -Å. Gustafsson"),
    ("sharp s before a space", r"Wei\ss e", "Weiße"),
    ("sharp s with empty braces", r"Gro\ss{}mann", "Großmann"),
    ("slashed o braced", r"{\O}rsted", "Ørsted"),
    ("control space", r"\o\ rsted", "ø rsted"),
    ("a command inside a word is not a letter", r"\ldots", r"\ldots"),
    ("dotless i", r"\'{\i}", r"\'ı"),
    ("dotless j", r"{\j}ava", "java"),
    ("Greek in math", r"H$\alpha$ flux", "H$α$ flux"),
    ("Greek before a subscript", r"$\mu_0$", "$μ_0$"),
    ("Greek ends at a space", r"$\Delta \eta$", "$Δη$"),
    ("phi is the closed form", r"$\phi$ and $\varphi$", "$ϕ$ and $φ$"),
    ("arXiv's table lacks upsilon", r"$\upsilon$", r"$\upsilon$"),
    (
        "other math stays TeX",
        r"$\sqrt{s_{NN}}$ and $\varepsilon$",
        r"$\sqrt{s_{NN}}$ and $\varepsilon$",
    ),
    ("symbols", r"\copyright\ 2007, \S 3", "© 2007, §3"),
    ("unknown accent keeps the letter", r"\'g and \~e", "g and e"),
    ("unknown named accent keeps both letters", r"\v{y}", "vy"),
    ("double braces reduced", "{{LHC}} data", "{LHC} data"),
    ("tie", r"\t{o}o", "oo"),
    ("no TeX", "Plain text, 5% of it", "Plain text, 5% of it"),
]


@pytest.mark.parametrize(("tex", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_converts_as_arxiv_does(tex: str, expected: str) -> None:
    """Each kind of TeX arXiv converts is converted, and nothing else is."""
    assert tex_to_utf8(tex) == expected


@pytest.mark.parametrize(("tex", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_converted_text_stays_as_it_is(tex: str, expected: str) -> None:
    """Text the API already converted reads the same again: one version, one record."""
    assert tex_to_utf8(tex_to_utf8(tex)) == tex_to_utf8(tex)


def _texts(page: Path, field: str) -> dict[str, str | None]:
    """``field`` of every record of an OAI page, by arXiv id."""
    found: dict[str, str | None] = {}
    for metadata in etree.parse(page).iter("{*}metadata"):
        (record,) = metadata
        found[record.findtext("{*}id") or ""] = record.findtext("{*}" + field)
    return found


RAW_PAGES = sorted(REAL.glob("ListRecords_arXivRaw_page*.xml"))


@pytest.mark.parametrize("field", ["title", "abstract", "comments", "journal-ref"])
@pytest.mark.parametrize("raw_page", RAW_PAGES, ids=[p.name for p in RAW_PAGES])
def test_every_raw_text_reads_as_arxivs_own_conversion(raw_page: Path, field: str) -> None:
    """Over arXiv's own answers, arXivRaw's TeX converted equals the ``arXiv`` format's text."""
    raw = _texts(raw_page, field)
    converted = _texts(raw_page.with_name(raw_page.name.replace("arXivRaw", "arXiv")), field)
    assert raw.keys() == converted.keys() and raw
    differ = [
        arxiv_id
        for arxiv_id, text in raw.items()
        if normalize_text(tex_to_utf8(text or "")) != normalize_text(converted[arxiv_id])
    ]
    assert differ == []


@pytest.mark.parametrize("source", ["oai-browse-db.json", "abs-files.json"])
def test_every_text_of_the_oracle_converts_as_arxiv_converts_it(source: str) -> None:
    """Every title, abstract, comment, journal-ref and author string arXiv's own ``tex2utf``
    converted (its browse.db and its .abs files) reads the same here, byte for byte."""
    records = json.loads((ORACLE / source).read_text(encoding="utf-8"))["records"]
    compared, differ = 0, []
    for arxiv_id, record in records.items():
        for field in ("title", "abstract", "comments", "journal_ref", "authors"):
            if record.get(field) is None:
                continue
            compared += 1
            if tex_to_utf8(record[field]) != record[field + "_tex2utf"]:
                differ.append((arxiv_id, field))
    assert differ == []
    changed = sum(
        r[f] != r[f + "_tex2utf"] for r in records.values() for f in ("title", "abstract")
    )
    assert compared > 2000 and changed > 10  # the corpus holds TeX to convert


# What TeX in arXiv's text is made of: commands converted and not, what follows them.
_COMMANDS = [
    *("'", '"', "`", "^", "~", "=", ".", "H", "c", "k", "r", "u", "v", "t", "j", "i", "l"),
    *("ss", "aa", "AA", "O", "alpha", "Delta", "upsilon", "varphi", "copyright", "deg"),
    *("sqrt", "mathcal", "ldots", "cdot", "text", "vec", ""),
]
_TEX_PIECES = [
    *(f"\\{command}" for command in _COMMANDS),
    *("{", "}", "{{", "}}", "$", "_", " ", "\n", "a", "e", "g", "o", "y", "é", "α"),
]
_TEX = st.lists(st.sampled_from(_TEX_PIECES), max_size=8).map("".join)


@settings(max_examples=examples(5))
@given(_TEX)
@example("\\j x")
@example("{\\j}")
@example("\\t{o}")
@example("\\v{s}")
@example("\\'e")
@example("{{a}}")
@example("{\\ss}")
@example("\\alpha$")
@example("\\copyright\\ 2007")
def test_the_quick_test_turns_away_only_text_nothing_would_change(text: str) -> None:
    """Text the quick test returns at once is what arXiv's every substitution leaves as it is."""
    assert tex_to_utf8(text) == _converted(text)


def test_the_apis_math_takes_the_quick_way() -> None:
    """TeX the API leaves (``\\sqrt``, ``\\mathcal``, ``\\varepsilon``) needs no substitution."""
    for text in ("$\\sqrt{s_{NN}}$, $\\mathcal{O}(n)$", "$\\varepsilon \\cdot \\ldots$"):
        assert _CONVERTIBLE_RE.search(text) is None
    assert _CONVERTIBLE_RE.search('Pl\\"otz') is not None
