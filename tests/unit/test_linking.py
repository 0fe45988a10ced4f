"""Linking seed papers to arXiv entries, identity of new entries, and the matching beneath.

The matching (text_similarity, assign) never guesses.
"""

from __future__ import annotations

from collections.abc import Callable

from syncd.domain.linking import (
    SEED_DOCUMENT_MARGIN,
    assign,
    coauthor_keys,
    earlier_version_ids,
    identify,
    link_seed_documents,
    link_seeds_to_arxiv,
    record_similarity,
    text_similarity,
)
from syncd.domain.record import Record
from tests import scenario

CALIBRATION_SEED = Record(
    title=scenario.seed_title("Rethinking Calibration"),
    abstract=scenario.seed_abstract("Rethinking Calibration"),
)
CALIBRATION_LIST = Record(abstract=scenario.list_abstract("Hu Xu, Zhaolong Xing"))


def _versions() -> dict[str, list[Record]]:
    current: dict[str, Record] = {}
    for record in scenario.upstream_versions():
        assert record.arxiv_id is not None
        current[record.arxiv_id] = record
    return {i: [r] for i, r in current.items()}


class TestLinkSeedPapers:
    def test_matches_any_revision(self) -> None:
        """The calibration paper links through its second seed revision's abstract."""
        seeds = {"calibration": [CALIBRATION_SEED, CALIBRATION_LIST]}
        assert link_seeds_to_arxiv(seeds, _versions()).pairs == {"calibration": "2606.03328"}

    def test_title_alone_does_not_match_a_retitled_first_version(self) -> None:
        """With only the seed page's revision, the calibration paper stays unlinked."""
        seeds = {"calibration": [CALIBRATION_SEED]}
        assert link_seeds_to_arxiv(seeds, _versions()).pairs == {}

    def test_retitled_version_links_through_an_earlier_version(self) -> None:
        """A seed that only an earlier version resembles links once that version is known."""
        v1 = Record(arxiv_id="2602.09578", version=1, title=scenario.FLEXMARL_V1_TITLE)
        v2 = Record(arxiv_id="2602.09578", version=2, title="FlexMARL", abstract="new words")
        seeds = {"flex": [Record(title=scenario.FLEXMARL_V1_TITLE, abstract="old words")]}
        assert link_seeds_to_arxiv(seeds, {"2602.09578": [v2]}).pairs == {}
        assert link_seeds_to_arxiv(seeds, {"2602.09578": [v2, v1]}).pairs == {"flex": "2602.09578"}

    def test_no_match_stays_unlinked(self) -> None:
        """A seed paper that is not upstream matches nothing."""
        seed = Record(title=scenario.seed_title("LRMoE"), abstract=scenario.seed_abstract("LRMoE"))
        assert link_seeds_to_arxiv({"lrmoe": [seed]}, _versions()).pairs == {}

    def test_earlier_version_ids(self) -> None:
        """Every earlier version of each entry is listed, versioned."""
        entries = [Record(arxiv_id="2606.03328", version=3), Record(arxiv_id="1", version=1)]
        assert earlier_version_ids(entries) == ["2606.03328v1", "2606.03328v2"]


def _abstract(*groups: tuple[str, range]) -> Record:
    """A record whose abstract is made of numbered words: ("shared", range(8)) -> shared00..07."""
    return Record(abstract=" ".join(f"{stem}{n:02}" for stem, ns in groups for n in ns))


class TestLinkSeedDocuments:
    # A new document's record shares 8 of 20 words with paper A (0.25) and 7 with paper B
    # (7/33, about 0.21): both above the minimum, A ahead by about 0.04.
    RECORD = _abstract(("word", range(20)))
    PAPER_A = _abstract(("word", range(8)), ("alpha", range(12)))
    PAPER_B = _abstract(("word", range(8, 15)), ("beta", range(13)))

    def test_a_lead_below_the_margin_is_left_apart(self) -> None:
        """A lead between 0.02 and 0.10 over the runner-up links nothing: a close call."""
        lead = record_similarity(self.RECORD, self.PAPER_A) - record_similarity(
            self.RECORD, self.PAPER_B
        )
        assert 0.02 < lead < SEED_DOCUMENT_MARGIN
        links = link_seed_documents([[self.PAPER_A], [self.PAPER_B]], [self.RECORD])
        assert links.pairs == {}
        assert [paper for paper, _ in links.contested[0]] == [0, 1]

    def test_a_clear_lead_links(self) -> None:
        """The same record links to A once B shares only two words (a lead near 0.2)."""
        paper_b = _abstract(("word", range(8, 10)), ("beta", range(18)))
        links = link_seed_documents([[self.PAPER_A], [paper_b]], [self.RECORD])
        assert links.pairs == {0: 0}


class TestIdentify:
    PEOPLE = coauthor_keys(("Zhida Jiang", "Z. Jiang", "Yang Xu"), "Zhida Jiang")
    CATEGORIES = ("cs.DC",)

    def test_shared_coauthor_is_plausible(self) -> None:
        """Sharing a co-author makes a new entry plausible."""
        entry = Record(authors=("Yang Xu", "Zhida Jiang"), categories=("hep-th",))
        identity = identify(entry, self.PEOPLE, self.CATEGORIES, "Zhida Jiang")
        assert identity.plausible
        assert identity.shared_coauthors == ("Yang Xu",)

    def test_shared_category_is_plausible(self) -> None:
        """Sharing a category makes a new entry plausible."""
        entry = Record(authors=("Zhida Jiang", "Stranger"), categories=("cs.DC",))
        assert identify(entry, self.PEOPLE, self.CATEGORIES, "Zhida Jiang").plausible

    def test_the_author_alone_is_not_a_coauthor(self) -> None:
        """A same-name author sharing nothing else is not plausible, in any form of the name."""
        for me in ("Zhida Jiang", "Z. Jiang"):
            entry = Record(authors=(me, "Stranger"), categories=("hep-th",))
            identity = identify(entry, self.PEOPLE, self.CATEGORIES, "Zhida Jiang")
            assert not identity.plausible
            assert identity.shared_coauthors == ()

    def test_coauthors_leave_out_every_form_of_the_authors_name(self) -> None:
        """ "Z. Jiang" on a known paper is the author, not a co-author; "Zhen Jiang" is one."""
        assert coauthor_keys(("Z. Jiang", "Zhen Jiang", "Yang Xu"), "Zhida Jiang") == {
            "zhen jiang",
            "yang xu",
        }


class TestTextSimilarity:
    def test_equal_after_normalisation_is_one(self) -> None:
        """Re-wrapped or re-cased text is an exact match."""
        assert text_similarity("Deep  learning\n for X", "deep learning for x") == 1.0

    def test_missing_text_is_zero(self) -> None:
        """Nothing matches a missing text."""
        assert text_similarity(None, "x") == 0.0

    def test_function_words_do_not_count(self) -> None:
        """Two texts sharing only stop words score zero."""
        assert text_similarity("the and for with", "with the and for them") == 0.0

    def test_overlap_is_jaccard(self) -> None:
        """Content-word overlap is the Jaccard index."""
        assert text_similarity("pruning sparse models", "pruning dense models") == 0.5


def _score(table: dict[tuple[str, str], float]) -> Callable[[str, str], float]:
    return lambda left, right: table.get((left, right), 0.0)


class TestAssign:
    def test_exact_matches_first(self) -> None:
        """Exact matches are paired and leave the pool."""
        result = assign(
            ["a", "b"],
            ["x", "y"],
            _score({("a", "x"): 1.0, ("b", "x"): 0.9, ("b", "y"): 0.5}),
            minimum=0.3,
            margin=0.1,
        )
        assert result.pairs == {"a": "x", "b": "y"}

    def test_below_minimum_is_unmatched(self) -> None:
        """A best score under the minimum pairs nothing."""
        result = assign(["a"], ["x"], _score({("a", "x"): 0.2}), minimum=0.3, margin=0.1)
        assert result.pairs == {}
        assert result.ambiguous == {}

    def test_close_runner_up_is_ambiguous(self) -> None:
        """Two right items within the margin leave the left item unmatched and reported."""
        result = assign(
            ["a"],
            ["x", "y"],
            _score({("a", "x"): 0.6, ("a", "y"): 0.55}),
            minimum=0.3,
            margin=0.1,
        )
        assert result.pairs == {}
        assert set(result.ambiguous["a"]) == {"x", "y"}

    def test_rival_claim_is_ambiguous(self) -> None:
        """Two left items claiming one right item within the margin are both left unmatched."""
        result = assign(
            ["a", "b"],
            ["x"],
            _score({("a", "x"): 0.6, ("b", "x"): 0.58}),
            minimum=0.3,
            margin=0.1,
        )
        assert result.pairs == {}

    def test_clear_winner_pairs(self) -> None:
        """A score with a clear lead over every alternative pairs."""
        result = assign(
            ["a", "b"],
            ["x", "y"],
            _score({("a", "x"): 0.6, ("a", "y"): 0.1, ("b", "x"): 0.2, ("b", "y"): 0.7}),
            minimum=0.3,
            margin=0.1,
        )
        assert result.pairs == {"a": "x", "b": "y"}
