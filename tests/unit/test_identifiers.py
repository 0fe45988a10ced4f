"""ORCID iDs and arXiv author ids: checked when read, so a typo never becomes a 404 a cycle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncd.domain.identifiers import check_arxiv_author_id, check_orcid, orcid_check_digit


@pytest.mark.parametrize(
    "orcid",
    # ORCID's own examples, one ending in X
    ["0000-0002-7970-7855", "0000-0002-1825-0097", "0000-0002-1694-233X", "0000-0001-5109-3700"],
)
def test_valid_orcids_pass(orcid: str) -> None:
    assert check_orcid(orcid) == orcid


@pytest.mark.parametrize(
    ("orcid", "reason"),
    [
        ("0000-0002-7970-7856", "check digit"),
        ("0000-0002-1694-2330", "check digit"),
        ("000000027970785X", "four groups"),
        ("0000-0002-7970", "four groups"),
        ("https://example.org/0000-0002-7970-7855", "four groups"),
        ("https://orcid.org/0000-0002-7970-7856", "check digit"),
        ("https://orcid.org/0000-0002-7970-7855/works", "four groups"),
    ],
)
def test_bad_orcids_say_why(orcid: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        check_orcid(orcid)


@pytest.mark.parametrize(
    "written",
    [
        "https://orcid.org/0000-0002-7970-7855",
        "http://orcid.org/0000-0002-7970-7855/",
        "HTTPS://ORCID.ORG/0000-0002-7970-7855",
        "https://www.orcid.org/0000-0002-7970-7855",
        "orcid.org/0000-0002-7970-7855",
        " https://orcid.org/0000-0002-7970-7855 ",
    ],
)
def test_orcids_url_of_an_id_is_the_bare_id(written: str) -> None:
    """ORCID's display form, as people paste it, is taken and kept as the bare iD."""
    assert check_orcid(written) == "0000-0002-7970-7855"


@given(st.text(alphabet="0123456789", min_size=15, max_size=15))
def test_every_single_digit_typo_is_caught(base: str) -> None:
    """ISO 7064 mod 11-2 catches any one wrong digit: the point of checking it."""
    good = base + orcid_check_digit(base)
    formatted = "-".join(good[i : i + 4] for i in range(0, 16, 4))
    assert check_orcid(formatted) == formatted
    for position in range(15):
        wrong = str((int(base[position]) + 1) % 10)
        typo = base[:position] + wrong + base[position + 1 :] + good[15]
        with pytest.raises(ValueError):
            check_orcid("-".join(typo[i : i + 4] for i in range(0, 16, 4)))


@pytest.mark.parametrize("ident", ["warner_s_1", "de_la_cruz_j_2", "o0brien_k_12"])
def test_arxiv_author_ids_pass(ident: str) -> None:
    assert check_arxiv_author_id(ident) == ident


@pytest.mark.parametrize("ident", ["Warner_S_1", "warner_s", "warner s 1", "warner_s_1.atom2", ""])
def test_malformed_arxiv_author_ids_are_refused(ident: str) -> None:
    with pytest.raises(ValueError, match="arXiv author id"):
        check_arxiv_author_id(ident)
