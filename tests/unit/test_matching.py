"""text_similarity and assign: matching that never guesses."""

from __future__ import annotations

from syncd.domain.linking import assign, text_similarity


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


def _score(table: dict[tuple[str, str], float]):  # type: ignore[no-untyped-def]
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
