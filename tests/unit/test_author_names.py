"""Author names as data (issue 29): the normal form, the key, the ``au:`` term, custom queries.

The query cases cite the arXiv API user manual, section 5.1 ("Details of
Query Construction"), for what each character or word means in a
``search_query``.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.config import AuthorSettings
from syncd.domain.author_names import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    author_term,
    check_name,
    check_query,
    name_key,
    repeated_names,
    spelled_otherwise,
)
from syncd.domain.authors import Author
from syncd.service.batches import author_batches, batch_query
from tests.fakearxiv import _tokenize

# Names a person has, each put between the quotes as it is.
QUOTED = [
    ("Zhida Jiang", "plain"),
    ("Seán Ó Briain", "accents"),
    ("Jean-Luc O'Neill", "hyphen and apostrophe: no meaning in the manual's grammar"),
    ("J. R. R. Tolkien", "initials with periods"),
    ("Martin Luther King, Jr.", "a comma and a suffix"),
    ("Ann Or", "an operator word not in capitals: the manual writes AND, OR, ANDNOT"),
    ("Ann or Andnot", "operator words in lower case are words of a name"),
    ("ORLANDO ANDERSON", "capitals that only begin with an operator"),
    ("Zoë Dubois & Co", "an ampersand is encoded by the client (%26), a word to arXiv"),
    ("Ng 2nd", "digits beside a letter"),
    ("李小龍", "CJK"),
    ("Jane Smith/Doe", "a slash: URL-quoted in paths, nothing in a query"),
]

# Each: a name, what it would do unquoted or inside the quotes, and the fragment of the refusal.
REFUSED = [
    ('Zed Zulu" OR au:"Eve Evans', "the quote ends the phrase: another author joins", "'\"'"),
    ("Eve Evans OR cat:cs.LG", "a field prefix: a whole category joins", "field prefix"),
    ("ti:quantum", "a field prefix (ti:) inside the phrase", "field prefix"),
    ("Ada (Lovelace)", "parentheses group Boolean expressions (%28 %29)", "parentheses"),
    ("Ada Lovelace)", "an unmatched parenthesis fails the query", "parentheses"),
    ("Ada [2023 TO 2024]", "brackets hold submittedDate's range", "brackets"),
    ("Ada \\ Lovelace", "a backslash may escape a quote; no escape is documented", "backslash"),
    ("Ada OR Grace", "OR: the manual's Boolean operator", "the word OR"),
    ("Ada AND Grace", "AND: the manual's Boolean operator", "the word AND"),
    ("Ada ANDNOT Grace", "ANDNOT: the manual's Boolean operator", "the word ANDNOT"),
    ("Ann OR", "an operator at the end of a name", "write it 'Or'"),
]

# Whitespace and invisible characters: zero-width, joiners, word joiner, BOM, bidi, breaks.
INVISIBLE = [
    "\u200b",  # ZERO WIDTH SPACE
    "\u200c",  # ZERO WIDTH NON-JOINER
    "\u200d",  # ZERO WIDTH JOINER
    "\u2060",  # WORD JOINER
    "\ufeff",  # ZERO WIDTH NO-BREAK SPACE (BOM)
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u2067",  # RIGHT-TO-LEFT ISOLATE
    "\u200f",  # RIGHT-TO-LEFT MARK
    "\u061c",  # ARABIC LETTER MARK
    "\u00ad",  # SOFT HYPHEN
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",  # NEXT LINE
    "\u2028",  # LINE SEPARATOR
    "\u2029",  # PARAGRAPH SEPARATOR
    "\ue000",  # private use
    "\U000e0041",  # TAG LATIN CAPITAL LETTER A
]


class TestAuthorTerm:
    @pytest.mark.parametrize(("name", "why"), QUOTED, ids=[w for _, w in QUOTED])
    def test_a_name_goes_between_the_quotes_as_it_is(self, name: str, why: str) -> None:
        """A person's name becomes au:"<name>", unchanged, whatever its letters and punctuation."""
        assert author_term(name) == f'au:"{name}"'

    @pytest.mark.parametrize(("name", "why", "reason"), REFUSED, ids=[n for n, _, _ in REFUSED])
    def test_query_syntax_in_a_name_is_refused(self, name: str, why: str, reason: str) -> None:
        """A character or word the manual gives a meaning to is refused, saying why, never sent."""
        with pytest.raises(ValueError, match="arXiv") as caught:
            author_term(name)
        assert reason in str(caught.value)
        with pytest.raises(ValueError):
            check_name(name)

    def test_only_a_name_in_normal_form_is_quoted(self) -> None:
        """A name not yet normalised is refused: only checked names reach a query."""
        with pytest.raises(ValueError, match="normal form 'Jane Smith'"):
            author_term("Jane  Smith")

    @pytest.mark.parametrize(("name", "why"), QUOTED, ids=[w for _, w in QUOTED])
    def test_the_fake_arxiv_reads_each_term_as_one_author(self, name: str, why: str) -> None:
        """The fake arXiv's query parser reads a batch of quoted names as one au: term each."""
        batch = [AuthorSettings(name="Ada Lovelace").author(), AuthorSettings(name=name).author()]
        tokens = _tokenize(batch_query(batch))
        assert [(t.kind, t.field, t.value) for t in tokens] == [
            ("term", "au", "Ada Lovelace"),
            ("op", "all", "OR"),
            ("term", "au", name),
        ]

    @given(st.text(min_size=1, max_size=40))
    def test_every_accepted_name_is_one_term(self, raw: str) -> None:
        """Whatever text is given, a name check_name accepts is one au: term to the parser."""
        try:
            name = check_name(raw)
        except ValueError:
            return
        (token,) = _tokenize(author_term(name))
        assert (token.kind, token.field, token.value, token.quoted) == ("term", "au", name, True)


class TestCheckName:
    @pytest.mark.parametrize(
        ("raw", "normal"),
        [
            ("  Jane   Smith ", "Jane Smith"),
            ("Jane\u00a0Smith", "Jane Smith"),  # NO-BREAK SPACE
            ("Jane\u3000Smith", "Jane Smith"),  # IDEOGRAPHIC SPACE
            ("Jane\u2009\u2009Smith", "Jane Smith"),  # THIN SPACEs
            ("Jose\u0301 Martí", "José Martí"),  # NFD to NFC
            ("\u212b", "\u00c5"),  # ANGSTROM SIGN is LATIN CAPITAL LETTER A WITH RING ABOVE
        ],
    )
    def test_names_are_kept_in_their_normal_form(self, raw: str, normal: str) -> None:
        """NFC, every run of spaces one space, none at the ends."""
        assert check_name(raw) == normal
        assert unicodedata.is_normalized("NFC", check_name(raw))

    @pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
    def test_control_and_invisible_characters_are_refused(self, char: str) -> None:
        """Line breaks, controls, zero-width and bidi characters are refused by code point."""
        with pytest.raises(ValueError, match=f"U\\+{ord(char):04X}"):
            check_name(f"Jane{char}Smith")

    @pytest.mark.parametrize(
        ("raw", "message"),
        [
            ("", "must not be empty"),
            (" \u3000 ", "must not be empty"),
            ("...", "has no letter"),
            ("1984", "has no letter"),
            ("x" * (MAX_NAME_CHARS + 1), f"at most {MAX_NAME_CHARS} characters"),
        ],
    )
    def test_empty_letterless_and_long_names_are_refused(self, raw: str, message: str) -> None:
        """A name has a letter and fits authors.name."""
        with pytest.raises(ValueError, match=message):
            check_name(raw)

    def test_the_longest_name_fits(self) -> None:
        """A name of exactly MAX_NAME_CHARS characters is accepted."""
        assert check_name("x" * MAX_NAME_CHARS) == "x" * MAX_NAME_CHARS


class TestNameKey:
    def test_case_and_spacing_do_not_make_another_author(self) -> None:
        """The issue's three spellings are one author; another name is another."""
        keys = {name_key(n) for n in ("Jane Smith", "jane smith", "JANE  SMITH", "Jane\u00a0Smith")}
        assert keys == {"jane smith"}
        assert name_key("Jane Smyth") != name_key("Jane Smith")

    def test_unicode_case_folding_and_forms(self) -> None:
        """Unicode's case folding (ß is ss) and either normal form give one key."""
        assert name_key("Johann STRAUSS") == name_key("Johann Strauß")
        assert name_key("JOSE\u0301") == name_key("josé")
        assert name_key("Ἀθηνᾶ") == name_key("Ἀθηνᾶ".upper())

    def test_repeated_names_point_at_the_first(self) -> None:
        """Each later spelling of a name points at the index where it first appears."""
        names = ["Jane Smith", "Ada", "jane smith", "ADA", "JANE  SMITH"]
        assert repeated_names(names) == [(2, 0), (3, 1), (4, 0)]

    def test_the_refusal_names_the_author_known(self) -> None:
        """A refused spelling is told the name to use."""
        assert spelled_otherwise("jane smith", "Jane Smith") == (
            "'jane smith' is the author 'Jane Smith': names are compared without regard to"
            " case; use 'Jane Smith'"
        )


class TestCheckQuery:
    @pytest.mark.parametrize(
        "query",
        [
            'au:"Hopper_G"',
            "au:del_maestro ANDNOT (ti:checkerboard OR ti:Pyrochlore)",  # the manual's example
            'au:del_maestro AND ti:"quantum criticality"',  # the manual's phrase example
            'ti:"a (b" AND (au:x)',  # a parenthesis inside a phrase is the phrase's
        ],
    )
    def test_whole_queries_pass_stripped(self, query: str) -> None:
        """Quotes paired and parentheses balanced outside them: the query is the operator's."""
        assert check_query(f"  {query} ") == query

    @pytest.mark.parametrize(
        ("query", "message"),
        [
            ('au:"Hopper_G', "double quote at character 4 is never closed"),
            ("(au:x OR au:y", "a parenthesis is opened and never closed"),
            ("au:x) OR (au:y", "character 5 is a closing parenthesis"),
            ('ti:"(" OR au:x)', "character 15 is a closing parenthesis"),
            ("au:x\nOR au:y", "U\\+000A"),
            ("au:x\u200b", "U\\+200B ZERO WIDTH SPACE"),
            ("x" * (MAX_QUERY_CHARS + 1), f"at most {MAX_QUERY_CHARS} characters"),
        ],
    )
    def test_broken_queries_are_refused(self, query: str, message: str) -> None:
        """A query arXiv could not parse as the operator meant is refused, saying where."""
        with pytest.raises(ValueError, match=message):
            check_query(query)

    def test_a_blank_query_is_none(self) -> None:
        """A blank query (an empty CSV cell, query = "") means the name's own au: term."""
        assert check_query("   ") is None
        author = AuthorSettings(name="Ada Lovelace", query=" ").author()
        assert (author.query, author.search_query) == (None, 'au:"Ada Lovelace"')

    def test_a_custom_query_is_sent_alone(self) -> None:
        """A custom query, whatever it says, is a batch of its own: it never joins another
        author's OR, so it can widen or fail only its own author's answer."""
        wide = AuthorSettings(name="Grace Hopper", query="au:Hopper_G OR cat:cs.LG").author()
        ada, emmy = Author("Ada Lovelace"), Author("Emmy Noether")
        batches = author_batches([ada, wide, emmy])
        assert [[a.name for a in batch] for batch in batches] == [
            ["Ada Lovelace", "Emmy Noether"],
            ["Grace Hopper"],
        ]
        assert [batch_query(b) for b in batches] == [
            'au:"Ada Lovelace" OR au:"Emmy Noether"',
            "au:Hopper_G OR cat:cs.LG",
        ]
