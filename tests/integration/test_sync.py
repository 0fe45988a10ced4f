"""syncd sync against the fake arXiv: linking, identity, no-change cycles, every kind."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.config import load_settings
from syncd.service.app import App
from syncd.service.sync import CycleResult, sync_all
from syncd.storage import Storage
from syncd.storage.migrate import upgrade
from syncd.storage.schema import events_table
from tests import fakearxiv as fa
from tests import scenario
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv, make_record
from tests.helpers import ROOT
from tests.integration.conftest import Syncd
from tests.scenario import CALIBRATION_KEY, NESTPIPE


def _events(syncd: Syncd, since: str | None = None) -> list[dict[str, Any]]:
    args = ("events", "--since", since) if since else ("events",)
    return list(syncd.json(*args))


def _synced(syncd: Syncd) -> str | None:
    """Run a cycle that must succeed; return the id of the newest event."""
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    events = _events(syncd)
    return events[-1]["id"] if events else None


class TestFirstSync:
    def test_links_seed_papers_present_upstream(self, syncd: Syncd) -> None:
        """Seven seed papers link, LRMoE and CompileMask stay unlinked, all silently but linked."""
        _synced(syncd)
        papers = syncd.papers()
        assert len(papers) == 9
        unlinked = sorted(k for k, p in papers.items() if p["status"] == "unlinked")
        assert [k.split("-")[0] for k in unlinked] == ["compilemask", "lrmoe"]
        linked = {p["arxiv_id"] for p in papers.values() if p["status"] == "tracked"}
        assert linked == {r.arxiv_id for r in scenario.upstream_versions()}
        events = _events(syncd)
        assert sorted(e["type"] for e in events) == ["paper.linked"] * 7
        assert {e["paper"]["arxiv_id"] for e in events} == linked

    def test_truncated_authors_are_no_author_change(self, syncd: Syncd) -> None:
        """No linked event reports an authors change for a truncated seed list."""
        _synced(syncd)
        assert all("authors" not in e["kinds"] for e in _events(syncd))

    def test_calibration_links_despite_its_first_version_title(self, syncd: Syncd) -> None:
        """The calibration paper links to 2606.03328 though v1's title differs from the seed's."""
        _synced(syncd)
        paper = syncd.papers()[CALIBRATION_KEY]
        assert paper["arxiv_id"] == "2606.03328"
        (event,) = [e for e in _events(syncd) if e["paper"]["key"] == CALIBRATION_KEY]
        assert event["kinds"] == ["title"]
        assert event["changes"]["title"]["new"] == scenario.CALIBRATION_V1_TITLE
        history = syncd.json("history", "2606.03328")
        assert [h["source"] for h in history][-1] == "arxiv"
        assert history[-1]["version"] == 1

    def test_links_through_an_earlier_version(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """When only v1 matches a seed, it is fetched by versioned id_list in one request."""
        arxiv.publish(
            replace(
                arxiv.current("2606.03328"),
                version=2,
                title="Capability Coverage as a Design Variable for Sparse Models",
                abstract="An entirely rewritten summary with other words throughout.",
                updated=None,
            )
        )
        _synced(syncd)
        assert syncd.papers()[CALIBRATION_KEY]["arxiv_id"] == "2606.03328"
        id_lists = [r.params["id_list"].split(",") for r in arxiv.requests if "id_list" in r.params]
        assert id_lists[0] == ["2606.03328v1"]
        # The backfill that follows reuses that answer and asks only for the others' v1s.
        assert id_lists[1:] == [["2602.09578v1", "2512.22386v1"]]

    def test_unmatched_seed_papers_cost_no_extra_request_later(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Once every entry is known, a cycle is the author query alone."""
        _synced(syncd)
        arxiv.reset_log()
        _synced(syncd)
        assert all("search_query" in r.params for r in arxiv.requests)


class TestIdentity:
    def test_same_name_stranger_is_a_candidate(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A same-name author sharing no co-author or category is held as a candidate: not
        announced as the author's, but as waiting for review."""
        _synced(syncd)
        last = _events(syncd)[-1]["id"]
        arxiv.publish(
            make_record(
                "2611.00001",
                authors=("Zhida Jiang", "Maria Stranger"),
                primary_category="hep-th",
                categories=("hep-th", "gr-qc"),
            )
        )
        _synced(syncd)
        assert syncd.papers()["2611.00001"]["status"] == "candidate"
        (review,) = _events(syncd, since=last)
        assert (review["type"], review["paper"], review["record"]) == (
            "author.review_needed",
            None,
            None,
        )
        assert review["changes"]["author"]["candidate_ids"] == ["2611.00001"]
        _synced(syncd)
        assert _events(syncd, since=review["id"]) == []  # seen again: not news

    def test_coauthor_makes_it_the_authors_paper(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A new paper sharing a co-author is announced as paper.added."""
        _synced(syncd)
        last = _events(syncd)[-1]["id"]
        arxiv.publish(
            make_record(
                "2611.00002",
                authors=("Yang Xu", "Zhida Jiang"),
                primary_category="math.CO",
                categories=("math.CO",),
            )
        )
        _synced(syncd)
        assert syncd.papers()["2611.00002"]["status"] == "tracked"
        (event,) = _events(syncd, since=last)
        assert event["type"] == "paper.added"
        assert event["paper"] == {"key": "2611.00002", "arxiv_id": "2611.00002"}

    def test_include_ids_overrides(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """include_ids announces a paper identity scoring would hold back."""
        syncd.extra = 'include_ids = ["2611.00001"]'
        arxiv.publish(
            make_record(
                "2611.00001", authors=("Zhida Jiang",), primary_category="hep-th", categories=()
            )
        )
        _synced(syncd)
        assert syncd.papers()["2611.00001"]["status"] == "tracked"

    def test_exclude_ids_ignores(self, syncd: Syncd) -> None:
        """exclude_ids keeps a paper out of the record entirely."""
        syncd.extra = f'exclude_ids = ["{NESTPIPE}"]'
        _synced(syncd)
        assert all(p["arxiv_id"] != NESTPIPE for p in syncd.papers().values())


class TestQuietCycle:
    @pytest.mark.parametrize("backend", ["old", "new-wrapped"])
    def test_rewrapped_text_and_new_feed_time_change_nothing(
        self, syncd: Syncd, arxiv: FakeArxiv, backend: str
    ) -> None:
        """Re-wrapped text and a new feed <updated> write no revision and no event."""
        _synced(syncd)
        before = syncd.counts()
        if backend == "old":
            arxiv.backend = "old"
        else:
            arxiv.wrap = True
        _synced(syncd)
        after = syncd.counts()
        assert after["revisions"] == before["revisions"]
        assert after["events"] == before["events"]
        assert after["runs"] == before["runs"] + 1
        assert syncd.last_run_status() == "ok"


NEST_AUTHORS = next(r.authors for r in scenario.upstream_versions() if r.arxiv_id == NESTPIPE)

KIND_CASES: list[tuple[str, Any, list[str]]] = [
    ("version", lambda a: a.revise(NESTPIPE), ["version"]),
    ("title", lambda a: a.revise(NESTPIPE, title="NestPipe v2"), ["version", "title"]),
    (
        "authors-added",
        lambda a: a.revise(NESTPIPE, authors=(*NEST_AUTHORS, "New Person")),
        ["version", "authors"],
    ),
    (
        "authors-removed",
        lambda a: a.revise(NESTPIPE, authors=NEST_AUTHORS[:-1]),
        ["version", "authors"],
    ),
    (
        "authors-reordered",
        lambda a: a.revise(NESTPIPE, authors=NEST_AUTHORS[::-1]),
        ["version", "authors"],
    ),
    (
        "abstract",
        lambda a: a.revise(NESTPIPE, abstract="A new abstract."),
        ["version", "abstract"],
    ),
    (
        "categories",
        lambda a: a.amend(NESTPIPE, categories=("cs.DC", "cs.LG", "cs.AI")),
        ["categories"],
    ),
    ("comment", lambda a: a.amend(NESTPIPE, comment="Accepted at SIGMOD"), ["comment"]),
    (
        "journal_ref",
        lambda a: a.amend(NESTPIPE, journal_ref="Proc. ACM Manag. Data 4, 2026"),
        ["journal_ref"],
    ),
    ("doi", lambda a: a.amend(NESTPIPE, doi="10.1145/1234567"), ["doi"]),
]


class TestKinds:
    @pytest.mark.parametrize(
        ("mutate", "kinds"), [c[1:] for c in KIND_CASES], ids=[c[0] for c in KIND_CASES]
    )
    def test_one_change_one_event(
        self, syncd: Syncd, arxiv: FakeArxiv, mutate: Any, kinds: list[str]
    ) -> None:
        """Each upstream change is one paper.revised event with exactly its kinds."""
        last = _synced(syncd)
        mutate(arxiv)
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert event["type"] == "paper.revised"
        assert event["paper"]["arxiv_id"] == NESTPIPE
        assert event["kinds"] == kinds
        history = syncd.json("history", NESTPIPE)
        assert history[-1]["kinds"] == kinds
        # the paper's current record is its latest revision's (copied in SQL)
        (paper,) = [p for p in syncd.json("papers") if p["arxiv_id"] == NESTPIPE]
        latest = history[-1]["record"]
        assert (paper["version"], paper["title"], paper["authors"]) == (
            latest["version"],
            latest["title"],
            latest["authors"],
        )

    def test_withdrawal(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A withdrawal is a new version whose event carries the withdrawn kind."""
        last = _synced(syncd)
        arxiv.withdraw(NESTPIPE, reason="This paper has been withdrawn by the authors.")
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert "withdrawn" in event["kinds"]
        assert "version" in event["kinds"]
        assert event["changes"]["withdrawn"] == {"old": False, "new": True}
        assert event["changes"]["withdrawn_by"] == {"old": None, "new": "author"}

    def test_author_change_lists_added_and_removed(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """The authors change names who was added and who removed."""
        last = _synced(syncd)
        arxiv.revise(NESTPIPE, authors=(NEST_AUTHORS[0], *NEST_AUTHORS[2:], "New Person"))
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert event["changes"]["authors"]["added"] == ["New Person"]
        assert event["changes"]["authors"]["removed"] == ["Zhaolong Xing"]


# Issue 15's cases, one paper each: what a new version says, and the verdict it must get.
ORDINARY_VERSIONS: dict[str, dict[str, str]] = {
    "2212.09483": {"comment": "Supersedes the withdrawn arXiv:2101.00001; 12 pages"},
    "2512.22386": {"comment": "v2: the claim withdrawn in v1 is restored with a new proof"},
    "2606.23087": {
        "comment": "Our earlier workshop version was withdrawn from the proceedings;"
        " this is the full paper"
    },
    "2606.12883": {"comment": "12 pages; arXiv admin note: text overlap with arXiv:2101.00001"},
    NESTPIPE: {
        "abstract": "This paper studies drugs withdrawn from the market after approval and"
        " what their withdrawal teaches about post-market surveillance."
    },
}
NOTICES: dict[str, tuple[str, str]] = {
    "2212.09483": ("This paper has been withdrawn by Zhida Jiang", "author"),
    "2512.22386": ("[This paper has been withdrawn by the authors.]", "author"),
    "2606.23087": ("This submission has been withdrawn at the request of the author.", "author"),
    NESTPIPE: (
        "arXiv admin note: this paper has been withdrawn by arXiv administrators because it"
        " duplicates an earlier submission by the same authors.",
        "admin",
    ),
}


class TestWithdrawals:
    def test_ordinary_versions_are_no_withdrawal(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """False alarms, a non-withdrawing admin note and a drug paper carry no withdrawn kind."""
        last = _synced(syncd)
        for arxiv_id, fields in ORDINARY_VERSIONS.items():
            arxiv.revise(arxiv_id, **fields)
        _synced(syncd)
        events = _events(syncd, since=last)
        assert sorted(e["paper"]["arxiv_id"] for e in events) == sorted(ORDINARY_VERSIONS)
        for event in events:
            assert "withdrawn" not in event["kinds"], event["paper"]
            assert (event["record"]["withdrawn"], event["record"]["withdrawn_by"]) == (False, None)

    @pytest.mark.parametrize("backend", ["new", "old"])
    def test_every_notice_form_is_a_withdrawal(
        self, syncd: Syncd, arxiv: FakeArxiv, backend: fa.Backend
    ) -> None:
        """The four notice forms, hard-wrapped or not, withdraw with who withdrew named."""
        last = _synced(syncd)
        arxiv.backend = backend  # the old backend hard-wrapped the summary
        for arxiv_id, (notice, _) in NOTICES.items():
            arxiv.withdraw(arxiv_id, "The main result relies on a false lemma.", notice=notice)
        _synced(syncd)
        events = {e["paper"]["arxiv_id"]: e for e in _events(syncd, since=last)}
        assert sorted(events) == sorted(NOTICES)
        for arxiv_id, (_, by) in NOTICES.items():
            changes = events[arxiv_id]["changes"]
            assert "withdrawn" in events[arxiv_id]["kinds"]
            assert changes["withdrawn"] == {"old": False, "new": True}
            assert changes["withdrawn_by"] == {"old": None, "new": by}

    def test_a_normal_version_after_a_withdrawal_unwithdraws(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """A later normal version is a withdrawn change back to false, shown in history."""
        _synced(syncd)
        abstract = arxiv.current(NESTPIPE).abstract
        arxiv.withdraw(NESTPIPE, "Withdrawn while a proof is checked.")
        last = _synced(syncd)
        normal = {"abstract": abstract, "comment": "v3: the proof holds", "withdrawn": False}
        arxiv.revise(NESTPIPE, **normal)
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert "withdrawn" in event["kinds"]
        assert event["changes"]["withdrawn"] == {"old": True, "new": False}
        assert event["changes"]["withdrawn_by"] == {"old": "author", "new": None}
        table = syncd("history", NESTPIPE).out.splitlines()
        assert "WITHDRAWN" in table[1]
        # SEQ, OBSERVED and VERSION DATE (a date and a time each), SOURCE, V, KINDS, WITHDRAWN
        assert [line.split()[8] for line in table[-2:]] == ["author", "-"]


class TestAddedAndRemoved:
    def test_removed_only_on_the_third_absent_sync(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A paper absent from complete syncs is removed on the third, not before."""
        last = _synced(syncd)
        arxiv.remove(NESTPIPE)
        for _ in range(2):
            _synced(syncd)
            assert _events(syncd, since=last) == []
            assert syncd.json("papers")[0] is not None
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert event["type"] == "paper.removed"
        assert event["paper"]["arxiv_id"] == NESTPIPE
        nest = next(p for p in syncd.papers().values() if p["arxiv_id"] == NESTPIPE)
        assert nest["status"] == "removed"

    def test_a_removal_and_a_return_carry_the_last_known_record(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """OxygenREC (linked at v2, its v1 backfilled after) leaves the author's results and
        comes back unchanged: both events carry its v2 record, as written and as read back,
        and so do events written before they pointed at a revision."""
        syncd.sections = "[sync]\nremoval_after = 1\n"
        last = _synced(syncd)
        arxiv.remove(scenario.OXYGEN)
        _synced(syncd)
        arxiv.restore(scenario.OXYGEN)
        _synced(syncd)
        events = _events(syncd, since=last)
        assert [e["type"] for e in events] == ["paper.removed", "paper.added"]
        for event in events:
            assert (event["record"]["arxiv_id"], event["record"]["version"]) == (
                scenario.OXYGEN,
                2,
            )
            assert event["record"]["title"] == arxiv.current(scenario.OXYGEN).title
        engine = sa.create_engine(syncd.database_url)
        try:
            with engine.begin() as conn:
                conn.execute(events_table.update().values(revision_id=None))
        finally:
            engine.dispose()
        assert _events(syncd, since=last) == events

    def test_absence_count_resets_when_seen(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """Two absences, a sighting, then two more absences remove nothing."""
        last = _synced(syncd)
        current = arxiv.current(NESTPIPE)
        arxiv.remove(NESTPIPE)
        _synced(syncd)
        _synced(syncd)
        arxiv.publish(replace(current, version=2, updated=None))
        _synced(syncd)
        arxiv.remove(NESTPIPE)
        _synced(syncd)
        _synced(syncd)
        assert [e["type"] for e in _events(syncd, since=last)] == ["paper.revised"]

    def test_new_paper_is_added(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A new paper in the author's field is paper.added with its record."""
        last = _synced(syncd)
        arxiv.publish(
            make_record("2612.00003", authors=("Zhida Jiang", "Zhaolong Xing"), title="New")
        )
        _synced(syncd)
        (event,) = _events(syncd, since=last)
        assert event["type"] == "paper.added"
        assert event["record"]["title"] == "New"


class TestBatchedAuthors:
    def test_authors_share_requests_and_get_their_own_papers(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Three authors cost one paged OR query, and each gets exactly the papers naming them."""
        syncd.extra = '[[authors]]\nname = "Ada Lovelace"\n[[authors]]\nname = "Alan Turing"'
        arxiv.publish(make_record("2611.10001", authors=("Ada Lovelace", "Charles Babbage")))
        arxiv.publish(make_record("2611.10002", authors=("Alan Turing", "Alonzo Church")))
        arxiv.reset_log()
        outcome = syncd("sync")
        assert outcome.code == 0, outcome.err
        searches = [r.params["search_query"] for r in arxiv.requests if "search_query" in r.params]
        # 9 entries in pages of 5: two requests for all three authors
        assert len(searches) == 2
        assert set(searches) == {'au:"Zhida Jiang" OR au:"Ada Lovelace" OR au:"Alan Turing"'}
        by_author: dict[str, set[str]] = {}
        for paper in syncd.json("papers"):
            by_author.setdefault(paper["author"], set()).add(paper["arxiv_id"])
        assert by_author["Ada Lovelace"] == {"2611.10001"}
        assert by_author["Alan Turing"] == {"2611.10002"}
        assert len(by_author["Zhida Jiang"] - {None}) == 7

    def test_an_entry_nobody_claims_fails_the_batch(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """An entry whose names match no batched author fails the cycle instead of being lost."""
        syncd.extra = '[[authors]]\nname = "Ada Lovelace"'
        assert syncd("sync").code == 0
        arxiv.inject(
            fa.body(
                fa.render_feed(
                    [make_record("2611.10003", authors=("Someone Else",))],
                    total=1,
                )
            )
        )
        outcome = syncd("sync")
        assert outcome.code == 1
        assert "no author's name matches" in outcome.err


class TestVersionsNeverGoDown:
    def _first_page(self, arxiv: FakeArxiv) -> bytes:
        """The body arXiv gives syncd's first search request, as the fake renders it now."""
        params = {
            "search_query": f'au:"{scenario.AUTHOR}"',
            "sortBy": "submittedDate",
            "sortOrder": "descending",
            "start": "0",
            "max_results": "5",
        }
        status, body = arxiv.respond(params)
        assert status == 200
        return body

    def test_a_lower_version_is_refused(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """After v3 is stored, an answer carrying v2 stores and emits nothing and names both."""
        _synced(syncd)
        current = arxiv.current(NESTPIPE)
        for _ in range(2):
            version = (current.version or 0) + 1
            current = arxiv.publish(replace(current, version=version, updated=None))
        _synced(syncd)
        stored = current.version or 0
        before = syncd.counts()
        page = self._first_page(arxiv)
        newest = f"{NESTPIPE}v{stored}</id>".encode()
        assert newest in page
        arxiv.inject(fa.body(page.replace(newest, f"{NESTPIPE}v{stored - 1}</id>".encode())))
        outcome = syncd("sync")
        assert outcome.code == 1
        assert f"{NESTPIPE}v{stored - 1} for a paper stored at v{stored}" in outcome.err
        assert syncd.counts() == {**before, "runs": before["runs"] + 1}
        assert syncd.last_run_status() == "failed"
        (paper,) = [p for p in syncd.papers().values() if p["arxiv_id"] == NESTPIPE]
        assert paper["version"] == stored
        # The same version again, and the next one, are trusted as always.
        _synced(syncd)
        assert syncd.counts()["events"] == before["events"]


# A daemon's claim window: half of an hourly schedule.
HALF_A_PERIOD = 1800.0


def _daemon_cycle(syncd: Syncd) -> list[CycleResult]:
    """One scheduled cycle as a freshly started ``syncd run`` has it: a new process's
    storage, claiming each author's cycle for half a period."""
    app = App.open(load_settings(syncd.config))
    client = app.arxiv_client()
    try:
        upgrade(app.storage.engine)
        settings = app.settings
        return sync_all(
            app.storage,
            client,
            settings.configured_authors,
            settings.sync,
            claim_window=HALF_A_PERIOD,
        )
    finally:
        client.close()
        app.close()


# Both databases: a run's liveness is a backend pid on PostgreSQL, a file lock on SQLite.
@ON_BOTH_DATABASES
class TestRestarts:
    def test_a_failed_cycle_claims_nothing(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """A first cycle that fails (arXiv answers 500s), then a restart within half a
        period: the new process's cycle runs instead of being skipped."""
        arxiv.inject_always(fa.status(500))
        assert [r.ok for r in _daemon_cycle(syncd)] == [False]
        arxiv.clear_faults()
        assert [r.ok for r in _daemon_cycle(syncd)] == [True]
        assert len(_events(syncd)) == 7

    def test_a_killed_processs_run_is_abandoned_at_the_next_start(self, syncd: Syncd) -> None:
        """A run left "running" by a SIGKILLed process is closed as abandoned by the next
        process, whose cycle of the author runs."""
        assert syncd("db", "upgrade").code == 0
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
        env["SYNCD_FAULT_POINTS"] = "sync.page_fetched:1"
        argv = [sys.executable, "-m", "syncd", "--config", str(syncd.config), "sync"]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=60, check=False)
        assert done.returncode == -9, done.stderr.decode()
        assert syncd.last_run_status() == "running"
        assert [r.ok for r in _daemon_cycle(syncd)] == [True]
        storage = Storage(syncd.database_url)
        try:
            assert [run.status for run in storage.runs.recent()] == ["ok", "abandoned"]
        finally:
            storage.close()
        assert len(_events(syncd)) == 7


# Both databases: the cycle and the removal meet at the author's row lock.
@ON_BOTH_DATABASES
class TestRemovalDuringACycle:
    ADA = "Ada Lovelace"

    def test_a_cycle_in_flight_publishes_nothing_after_its_author_is_removed(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """`authors remove` while the author's cycle waits on arXiv: the cycle stores and
        announces nothing (its run failed, saying why), the paper stays unknown."""
        syncd.author_table = False
        arxiv.publish(make_record("2611.01001", authors=(self.ADA, "Charles Babbage")))
        assert syncd("authors", "add", self.ADA).code == 0
        assert syncd("sync").code == 0  # the baseline: author.added
        arxiv.publish(make_record("2611.01002", authors=(self.ADA, "Charles Babbage")))
        storage = Storage(syncd.database_url)
        removed: list[str] = []

        def remove_while_answering(params: Any) -> bool:
            if not removed and "search_query" in params:
                storage.authors.remove(self.ADA)
                removed.append(self.ADA)
            return False  # the answer itself is untouched

        arxiv.inject_always(fa.status(500, when=remove_while_answering))
        try:
            outcome = syncd("sync")
            runs = storage.runs.recent(self.ADA)
        finally:
            storage.close()
        assert removed == [self.ADA]
        assert outcome.code == 1
        assert [e["type"] for e in _events(syncd)] == ["author.added"]
        assert "2611.01002" not in {p["arxiv_id"] for p in syncd.papers().values()}
        assert (runs[0].status, runs[0].error) == (
            "failed",
            f"author {self.ADA!r} stopped being followed during the cycle: nothing stored",
        )
