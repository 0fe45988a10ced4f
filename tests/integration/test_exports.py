"""Exports by URL and by ``syncd export``, on SQLite and PostgreSQL, read back by readers that
did not write them (tests/citationreaders.py).

The record: the seeded author's papers, FedCG withdrawn by its authors, and a
published paper whose title and co-authors arXiv serves in TeX
(tests/recorded.py), which syncd stores as Unicode; a second followed author
shares papers with the first, and both are the group ``lab``; a third has a
paper of her own and no group.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.citationreaders import read_bibtex, read_ris, render_csl, ris_name
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import make_record
from tests.integration.conftest import Site, Syncd, revise_nestpipe, serving, sync_ok
from tests.recorded import as_tex
from tests.scenario import AUTHOR, FEDCG, NESTPIPE

pytestmark = ON_BOTH_DATABASES

SECOND = "Zoë Ørsted"  # a co-author of the seeded author's papers (tests/scenario.py)
PUBLISHED_ID = "2005.01234"
PUBLISHED_TITLE = "Über die Łódź-Quantenmechanik: Spin & Ørsted's 50% rule"
PUBLISHED_AUTHORS = (AUTHOR, "Jörg Weiß", "José Núñez", "Johannes Diderik van der Waals")
OUTSIDER = "Ada Lovelace"  # followed, in no group
OUTSIDER_ID = "2101.00042"
DOI = "10.1103/PhysRevD.101.012345"
JOURNAL = "Phys. Rev. D 101, 012345 (2020)"
_BIBTEX = "application/x-bibtex; charset=utf-8"
_CSL = "application/vnd.citationstyles.csl+json; charset=utf-8"
_RIS = "application/x-research-info-systems; charset=utf-8"


@pytest.fixture
def world(syncd: Syncd) -> Iterator[Site]:
    """Synced twice (the second author and the group added between), then served."""
    syncd.arxiv.publish(
        make_record(
            PUBLISHED_ID,
            title=as_tex(PUBLISHED_TITLE),
            authors=[as_tex(name) or name for name in PUBLISHED_AUTHORS],
            doi=DOI,
            journal_ref=JOURNAL,
            published="2020-05-04T12:00:00Z",
            updated="2020-05-04T12:00:00Z",
        )
    )
    syncd.arxiv.publish(
        make_record(OUTSIDER_ID, authors=[OUTSIDER], published="2021-01-04T12:00:00Z")
    )
    sync_ok(syncd)
    syncd.arxiv.withdraw(FEDCG, "A duplicate of a later paper.")
    syncd.sections += (
        f'\n[[authors]]\nname = "{SECOND}"\n'
        f'\n[[authors]]\nname = "{OUTSIDER}"\n'
        f'\n[[groups]]\nname = "lab"\nmembers = ["{AUTHOR}", "{SECOND}"]\n'
    )
    sync_ok(syncd)
    with serving(syncd) as site:
        yield site


def _author_path(name: str, extension: str) -> str:
    return f"/authors/{name}/papers.{extension}"


def _ids(entries: dict[str, object]) -> list[str]:
    """The arXiv ids a set of BibTeX keys names (a key ends with its paper's id)."""
    return sorted(key.rsplit("_", 1)[1] for key in entries)


SHARED = ["2512.22386", "2602.09578", "2604.06956", "2606.03328", "2606.12883", "2606.23087"]
JIANG = sorted([*SHARED, PUBLISHED_ID, FEDCG])


def test_an_authors_bibtex_reads_back_in_pybtex(world: Site) -> None:
    """The author's tracked papers: Unicode from arXiv's TeX, the withdrawal, DOI and journal."""
    answer = world.get(_author_path(AUTHOR, "bib"))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == _BIBTEX
    assert answer.headers["content-disposition"] == (
        "attachment; filename=\"papers.bib\"; filename*=UTF-8''Zhida%20Jiang.bib"
    )
    entries = read_bibtex(answer.text)
    assert _ids(entries) == JIANG  # tracked only: not the two seed papers arXiv lacks
    (published,) = [e for key, e in entries.items() if key.endswith(PUBLISHED_ID)]
    assert published.fields["title"] == PUBLISHED_TITLE
    assert published.authors == list(PUBLISHED_AUTHORS)
    assert published.families[-1] == "van der Waals"
    assert published.fields["doi"] == DOI
    assert published.fields["journal"] == JOURNAL
    assert (published.fields["year"], published.fields["month"]) == ("2020", "May")
    assert "note" not in published.fields
    (withdrawn,) = [e for key, e in entries.items() if key.endswith(FEDCG)]
    assert withdrawn.fields["note"] == "Withdrawn from arXiv by its authors (v2)"
    assert withdrawn.fields["version"] == "2"
    assert withdrawn.fields["eprint"] == FEDCG
    assert withdrawn.fields["primaryClass"]


def test_an_authors_csl_json_renders_in_citeproc(world: Site) -> None:
    answer = world.get(_author_path(AUTHOR, "json"))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == _CSL
    items, rendered = render_csl(answer.text)
    assert sorted(item["number"] for item in items) == JIANG
    (published,) = [item for item in items if item["number"] == PUBLISHED_ID]
    assert published["author"][1] == {"family": "Weiß", "given": "Jörg"}
    assert published["DOI"] == DOI
    text = rendered[published["id"]]
    assert "Jiang, Z." in text and PUBLISHED_TITLE in text and "(2020)" in text


def test_a_groups_ris_holds_each_members_paper_once(world: Site) -> None:
    """Both members have the shared papers: one record each, with every author."""
    answer = world.get("/groups/lab/papers.ris")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == _RIS
    records = read_ris(answer.text)
    assert sorted(r["AN"][0].removeprefix("arXiv:") for r in records) == JIANG
    (published,) = [r for r in records if r["AN"] == [f"arXiv:{PUBLISHED_ID}"]]
    assert [ris_name(a) for a in published["AU"]] == list(PUBLISHED_AUTHORS)
    assert published["TY"] == ["JOUR"]
    (withdrawn,) = [r for r in records if r["AN"] == [f"arXiv:{FEDCG}"]]
    assert withdrawn["N1"] == ["Withdrawn from arXiv by its authors (v2)"]


def test_everyones_export_holds_each_paper_once_under_the_same_keys(world: Site) -> None:
    """A key is the paper's own: the same in everyone's, an author's and a group's export,
    and on every request."""
    everyone = world.get("/papers.bib").text
    entries = read_bibtex(everyone)
    assert _ids(entries) == sorted([*JIANG, OUTSIDER_ID])
    second = read_bibtex(world.get(_author_path(SECOND, "bib")).text)
    assert _ids(second) == SHARED
    assert set(second) < set(entries)
    group = {item["id"] for item in render_csl(world.get("/groups/lab/papers.json").text)[0]}
    assert group == {key for key in entries if not key.endswith(OUTSIDER_ID)}
    assert world.get("/papers.bib").text == everyone


def test_keys_outlive_a_new_version(world: Site) -> None:
    """NestPipe's v2 puts another author first and retitles it: its key stays v1's."""
    before = set(read_bibtex(world.get("/papers.bib").text))
    revise_nestpipe(world.syncd.arxiv)
    sync_ok(world.syncd)
    after = read_bibtex(world.get("/papers.bib").text)
    assert set(after) == before
    (nestpipe,) = [entry for key, entry in after.items() if key.endswith(NESTPIPE)]
    assert nestpipe.fields["version"] == "2"
    assert nestpipe.authors[0] == "Zhaolong Xing"
    assert f"jiang2026nestpipe_{NESTPIPE}" in after


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("published=true", [PUBLISHED_ID]),
        ("published=false", sorted(set(JIANG) - {PUBLISHED_ID})),
        ("until=2020-05-04", [PUBLISHED_ID]),
        ("since=2020-05-05", sorted(set(JIANG) - {PUBLISHED_ID})),
        ("since=2020-05-04&until=2020-05-04", [PUBLISHED_ID]),
        # A seed paper arXiv lacks has no first version's date: in no period.
        ("status=unlinked&since=2000-01-01", []),
        ("status=tracked&status=unlinked&until=2019-01-01", []),
    ],
)
def test_filters_narrow_the_export(world: Site, query: str, ids: list[str]) -> None:
    entries = read_bibtex(world.get(f"{_author_path(AUTHOR, 'bib')}?{query}").text)
    assert sorted(e.fields["eprint"] for e in entries.values()) == ids


def test_seed_papers_not_on_arxiv_are_exported_when_asked(world: Site) -> None:
    """``status=unlinked``: the seed papers, keyed by their slug, without arXiv fields."""
    entries = read_bibtex(world.get("/papers.bib?status=unlinked").text)
    assert len(entries) == 2
    for key, entry in entries.items():
        assert "eprint" not in entry.fields and "url" not in entry.fields
        assert key.rsplit("_", 1)[1] in {
            "compilemask-bridging-the-gap-between",
            "lrmoe-demand-side-load-re-calibration",
        }


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/papers.bib?since=yesterday", 400, "bad parameter 'since'"),
        ("/papers.ris?until=2020-02-30", 400, "bad parameter 'until'"),
        ("/papers.json?status=gone", 400, "bad parameter 'status.0'"),
        ("/papers.bib?published=maybe", 400, "bad parameter 'published'"),
        (
            "/papers.bib?since=2021-01-02&until=2021-01-01",
            400,
            "until (2021-01-01) is before since (2021-01-02)",
        ),
        ("/authors/Nobody/papers.bib", 404, "no author by that name is followed"),
        ("/groups/nobody/papers.bib", 404, "no group named 'nobody'"),
    ],
)
def test_bad_requests_say_what_is_wrong(world: Site, path: str, status: int, message: str) -> None:
    answer = world.get(path)
    assert answer.status_code == status
    assert message in html.unescape(answer.text)  # a page, as every path under /papers


def test_the_cli_writes_what_the_url_serves(world: Site, tmp_path: Path) -> None:
    """``syncd export`` on stdout and into a file: the same bytes as the URL, each time."""
    syncd = world.syncd
    for form, extension in (("bibtex", "bib"), ("csl-json", "json"), ("ris", "ris")):
        served = world.get(_author_path(AUTHOR, extension)).content
        outcome = syncd("export", "--format", form, "--author", AUTHOR)
        assert outcome.code == 0, outcome.err
        assert outcome.out.encode() == served
        target = tmp_path / f"papers.{extension}"
        assert syncd("export", "--format", form, "--group", "lab", "-o", str(target)).code == 0
        assert target.read_bytes() == world.get(f"/groups/lab/papers.{extension}").content
    everyone = syncd("export", "--format", "bibtex", "--published")
    assert _ids(read_bibtex(everyone.out)) == [PUBLISHED_ID]
    assert everyone.out.encode() == world.get("/papers.bib?published=true").content
    period = syncd("export", "--format", "ris", "--since", "2020-05-05", "--unpublished")
    # Everyone's: the outsider's paper too.
    assert len(read_ris(period.out)) == len(JIANG)
    both = syncd("export", "--format", "bibtex", "--status", "unlinked", "--status", "tracked")
    assert len(read_bibtex(both.out)) == len(JIANG) + 1 + 2  # the outsider's, two seed papers
    assert both.out.encode() == world.get("/papers.bib?status=unlinked&status=tracked").content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "invalid choice: 'xml'"),
        (["--format", "ris", "--since", "2020-13-01"], "not a day (YYYY-MM-DD)"),
        (["--format", "ris", "--status", "gone"], "invalid choice: 'gone'"),
        (["--format", "ris", "--published", "--unpublished"], "not allowed with argument"),
        (["--format", "ris", "--author", AUTHOR, "--group", "lab"], "not allowed with argument"),
        (["--format", "ris", "--author", "Nobody"], "no author named 'Nobody'"),
        (["--format", "ris", "--group", "nobody"], "no group named 'nobody'"),
        (
            ["--format", "ris", "--since", "2021-01-02", "--until", "2021-01-01"],
            "until (2021-01-01) is before since (2021-01-02)",
        ),
    ],
)
def test_bad_arguments_exit_2(
    world: Site, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    try:
        outcome = world.syncd("export", *args)
        code, err = outcome.code, outcome.err
    except SystemExit as exit_:  # argparse's own refusals
        code, err = int(str(exit_.code)), capsys.readouterr().err
    assert code == 2
    assert message in err


def test_an_unwritable_file_is_a_failure(world: Site, tmp_path: Path) -> None:
    outcome = world.syncd("export", "--format", "ris", "-o", str(tmp_path / "no" / "x.ris"))
    assert outcome.code == 1
    assert "cannot write" in outcome.err
