"""A paper's history in a real browser (tests/integration/browser.py), on a scripted arXiv.

The scripted world: the first sync links the seeds and backfills the
versions syncd did not see (FlexMARL's v1, whose title differs from the
seeds'); then the calibration paper gets a v2 with one sentence of its
abstract changed, FedCG is withdrawn by its authors, the LoRA paper's v1
gets a DOI and a journal reference without a new version, and OxygenREC leaves
the author's results and comes back unchanged.  The page, ``syncd history``
and the history API must tell the same story, revision by revision.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from syncd.domain.record import parse_arxiv_time
from syncd.render.field_diffs import kind_label
from tests.fakearxiv import FakeArxiv, make_record
from tests.integration.browser import DESKTOP, PHONE, fits_the_width, shot
from tests.integration.conftest import Site, Syncd, serving, sync_ok
from tests.scenario import (
    CALIBRATION,
    CALIBRATION_KEY,
    FEDCG,
    FLEXMARL,
    FLEXMARL_V1_TITLE,
    LORA,
    OXYGEN,
    list_abstract,
    seed_title,
)

CALIBRATION_V1_ABSTRACT = list_abstract("Hu Xu, Zhaolong Xing")
CALIBRATION_V2_ABSTRACT = CALIBRATION_V1_ABSTRACT.replace(
    "reaches 58.8% total retention", "reaches 59.1% total retention"
)
WITHDRAWN_REASON = "A duplicate of a later paper."
LORA_DOI = "10.1145/3711896.3736"
LORA_JOURNAL = "Proceedings of KDD 2026, pp. 1-12"
HOSTILE_ID = "2601.00777"
HOSTILE_NOTICE = "This paper has been withdrawn by <script>window.pwned = 'notice'</script> us."
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


@pytest.fixture
def world(syncd: Syncd, arxiv: FakeArxiv) -> Iterator[Site]:
    """The scripted world above, served."""
    syncd.sections = "[sync]\nremoval_after = 1\n"
    sync_ok(syncd)
    arxiv.revise(CALIBRATION, abstract=CALIBRATION_V2_ABSTRACT)
    arxiv.withdraw(FEDCG, WITHDRAWN_REASON)
    arxiv.amend(LORA, doi=LORA_DOI, journal_ref=LORA_JOURNAL)
    arxiv.remove(OXYGEN)
    sync_ok(syncd)
    arxiv.restore(OXYGEN)
    sync_ok(syncd)
    with serving(syncd) as site:
        yield site


def _name(viewport: Any) -> str:
    return "phone" if viewport is PHONE else "desktop"


def _change(page: Any, label: str) -> Any:
    """The change listed under a revision (``v2``) of the page's changes."""
    return page.locator(f"ol.timeline > li[id='change-{label}']")


@VIEWPORTS
def test_flexmarl_shows_each_version_against_the_one_before(
    world: Site, page: Any, viewport: Any
) -> None:
    """v1's own title is struck and v2's inserted under v2; every version has arXiv's date
    (the fake's <updated>) and syncd's, and links to itself on arXiv."""
    page.set_viewport_size(viewport)
    page.goto(f"{world.url}/papers/{FLEXMARL}")
    assert page.locator("h1").inner_text() == seed_title("FlexMARL")
    v2 = _change(page, "v2")
    assert v2.locator(".source").inner_text() == "v2 against v1"
    assert " ".join(v2.locator("dd.change-title del").all_inner_texts()) == "Efficient"
    assert v2.locator("dd.change-title ins").all_inner_texts() == ["FlexMARL: Graph-Driven"]
    struck = v2.locator("dd.change-title del").first
    assert struck.evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    v1 = _change(page, "v1")
    assert v1.locator(".source").inner_text() == "v1 against seed"
    assert v1.locator("dd.change-title del").all_inner_texts() == ["FlexMARL: Graph-Driven"]
    assert v1.locator("dd.change-title").inner_text() == (
        f"FlexMARL: Graph-Driven {FLEXMARL_V1_TITLE}"
    )
    history = page.locator("ol.history > li")
    assert history.locator(".label").all_inner_texts() == ["seed", "v1", "v2"]
    dates = history.locator(".arxiv-date time").evaluate_all(
        "times => times.map(t => t.getAttribute('datetime'))"
    )
    served = [parse_arxiv_time(r.updated) for r in world.syncd.arxiv.papers[FLEXMARL]]
    assert [datetime.fromisoformat(d) for d in dates] == served
    links = page.locator("dd.links .versions a")
    assert links.evaluate_all("as => as.map(a => a.href)") == [
        f"https://arxiv.org/abs/{FLEXMARL}v1",
        f"https://arxiv.org/abs/{FLEXMARL}v2",
    ]
    assert page.locator("dd.links a.pdf").get_attribute("href") == (
        f"https://arxiv.org/pdf/{FLEXMARL}v2"
    )
    assert fits_the_width(page)
    shot(page, f"history-flexmarl-{_name(viewport)}")


def test_the_calibration_abstract_edit_reads_as_one_sentence(world: Site, page: Any) -> None:
    """v1 → v2 changed one number: the change shows a few words around it, the rest
    folded in a <details> that opens without script; LaTeX stays as written."""
    page.goto(f"{world.url}/papers/{CALIBRATION_KEY}")
    v2 = _change(page, "v2")
    abstract = v2.locator("dd.change-abstract")
    excerpt = abstract.locator(".excerpt")
    assert excerpt.locator("del").all_inner_texts() == ["58.8%"]
    assert excerpt.locator("ins").all_inner_texts() == ["59.1%"]
    assert len(excerpt.inner_text().split()) < 25
    whole = abstract.locator("details.whole")
    assert not whole.locator("p").is_visible()
    whole.locator("summary").click()
    assert whole.locator("p").is_visible()
    assert "$n{=}15$" in whole.locator("p").inner_text()
    assert "$n{=}15$" in page.locator(".current .abstract").inner_text()
    shot(page, "history-calibration")


@VIEWPORTS
def test_a_withdrawn_paper_has_a_banner_not_a_word_soup(
    world: Site, page: Any, viewport: Any
) -> None:
    """FedCG's v2 is a withdrawal: a banner says so, and its change shows the notice whole."""
    page.set_viewport_size(viewport)
    page.goto(f"{world.url}/papers/{FEDCG}")
    banner = page.locator(".banner.withdrawn")
    assert banner.inner_text() == (
        "Withdrawn in v2 by the authors: This paper has been withdrawn by the authors."
    )
    abstract = _change(page, "v2").locator("dd.change-abstract")
    assert abstract.inner_text() == (
        "arXiv's withdrawal notice: This paper has been withdrawn by the authors."
    )
    assert abstract.locator("del").count() == 0
    assert page.locator(".current dd.comment").inner_text() == WITHDRAWN_REASON
    chips = page.locator("ol.history > li").last.locator(".chip").all_inner_texts()
    assert chips == ["Version", "Abstract", "Comment", "Withdrawn"]
    assert fits_the_width(page)
    shot(page, f"history-withdrawn-{_name(viewport)}")


def test_a_later_observation_of_a_version_is_its_own_revision(world: Site, page: Any) -> None:
    """The LoRA paper's DOI came after its v1: a revision of its own, against the first
    observation of v1, with the DOI linked and the kinds in words."""
    page.goto(f"{world.url}/papers/{LORA}")
    labels = page.locator("ol.history > li .label").all_inner_texts()
    assert labels[-1] == "v1" and labels[-2].startswith("v1 (r")
    latest = page.locator("ol.timeline > li").first
    assert latest.locator(".source").inner_text() == f"v1 against {labels[-2]}"
    assert latest.locator("dt").all_inner_texts() == ["Journal reference", "DOI"]
    chips = page.locator("ol.history > li").last.locator(".chip").all_inner_texts()
    assert chips == ["Journal reference", "DOI"]
    doi = page.locator(".current dd.doi a")
    assert (doi.inner_text(), doi.get_attribute("href")) == (
        LORA_DOI,
        f"https://doi.org/{LORA_DOI}",
    )
    assert page.locator(".current dd.journal-ref").inner_text() == LORA_JOURNAL
    shot(page, "history-later-observation")


def test_a_paper_that_left_and_came_back_shows_both_events(world: Site, page: Any) -> None:
    """OxygenREC's page lists its removal and its return, each naming it by its title."""
    page.goto(f"{world.url}/papers/{OXYGEN}")
    announced = page.locator("ol.announced > li")
    summaries = announced.locator(".summary").all_inner_texts()
    assert summaries[:2] == ["New paper, v2", "No longer in the author's arXiv results, v2"]
    for headline in announced.locator(".headline").all_inner_texts()[:2]:
        assert headline.startswith("OxygenREC: …")
    page.goto(f"{world.url}/events")
    removed = page.locator("ol.events .headline", has_text="no longer in the author's")
    assert removed.inner_text() == (
        f"OxygenREC: … ({OXYGEN}) v2: no longer in the author's arXiv results"
    )


@VIEWPORTS
def test_the_compare_view(world: Site, page: Any, viewport: Any) -> None:
    """Any two revisions, chosen on the page without script; a bad choice is a 400 page."""
    page.set_viewport_size(viewport)
    page.goto(f"{world.url}/papers/{FLEXMARL}")
    page.select_option("form.compare select[name=from]", "seed")
    page.select_option("form.compare select[name=to]", "v1")
    page.click("form.compare button")
    page.wait_for_url("**/compare?from=seed&to=v1")
    assert page.locator("h1").inner_text() == "Changes from seed to v1"
    assert page.locator(".compared dd.change-title del").count() > 0
    assert fits_the_width(page)
    shot(page, f"history-compare-{_name(viewport)}")
    answer = page.goto(f"{world.url}/papers/{FLEXMARL}/compare?from=v9&to=v1")
    assert answer is not None and answer.status == 400
    assert page.locator("p.error").inner_text() == (
        "bad parameter 'from': this paper has no revision v9; "
        "it has seed, v1, v2 (or r<seq>, a revision's number)"
    )


def test_history_cli_and_api_agree_with_the_page(world: Site, page: Any) -> None:
    """Revision by revision, the kinds of `syncd history` (JSON and table), of the history API
    and the page's chips are the same, for every paper."""
    for paper in world.syncd.json("papers"):
        ref = paper["arxiv_id"] or paper["key"]
        cli = [r["kinds"] for r in world.syncd.json("history", ref)]
        api = [r["kinds"] for r in world.get(f"/api/v1/papers/{ref}/history").json()]
        table = world.syncd("history", ref).out.splitlines()[2:]
        page.goto(f"{world.url}/papers/{ref}")
        items = page.locator("ol.history > li")
        chips = [
            items.nth(i).locator(".chip[class*=kind-]").all_inner_texts()
            for i in range(items.count())
        ]
        assert api == cli, ref
        assert chips == [[kind_label(k) for k in kinds] for kinds in cli], ref
        assert [",".join(kinds) or "-" for kinds in cli] == [_kinds_cell(r) for r in table], ref


def test_no_script_runs_from_a_notice_or_a_compared_title(
    syncd: Syncd, arxiv: FakeArxiv, page: Any
) -> None:
    """A withdrawal notice and titles holding markup show as text in the banner, the
    changes and the compare view, and run nothing."""
    arxiv.publish(make_record(HOSTILE_ID, title="A <b>study</b>", authors=("Zhida Jiang",)))
    sync_ok(syncd)
    arxiv.withdraw(HOSTILE_ID, notice=HOSTILE_NOTICE)
    sync_ok(syncd)
    with serving(syncd) as site:
        for path in ("", "/compare?from=v1&to=v2"):
            page.goto(f"{site.url}/papers/{HOSTILE_ID}{path}")
            page.wait_for_load_state("load")
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert page.locator("main script, main b:has-text('study')").count() == 0
        page.goto(f"{site.url}/papers/{HOSTILE_ID}")
        assert "<script>window.pwned = 'notice'</script>" in page.locator(".banner").inner_text()


def _kinds_cell(line: str) -> str:
    """The KINDS column of a `syncd history` table row (columns are two spaces apart)."""
    cells = [c.strip() for c in line.split("  ") if c.strip()]
    return cells[5]
