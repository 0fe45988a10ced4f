"""Every version from arXiv's own record: backfilled by cycles and by `syncd backfill`."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from prometheus_client import CollectorRegistry

from syncd.config import ArxivSettings, load_settings
from syncd.domain.refusals import SET_ASIDE_AFTER
from syncd.errors import RetryableUpstreamError
from syncd.metrics import register_store_collector
from syncd.service.app import App
from syncd.service.backfill import BackfillPlan, plan_backfill, run_backfill
from syncd.sources.arxiv import ArxivClient
from syncd.storage import Storage
from tests import fakearxiv as fa
from tests import scenario
from tests.conftest import ON_BOTH_DATABASES
from tests.fakearxiv import FakeArxiv
from tests.integration.conftest import Syncd
from tests.integration.rewind import forget_backfilled
from tests.scenario import CALIBRATION, FLEXMARL, LORA, NESTPIPE, OXYGEN

LINKED = ["paper.linked"] * 7


def _id_lists(arxiv: FakeArxiv) -> list[list[str]]:
    return [r.params["id_list"].split(",") for r in arxiv.requests if "id_list" in r.params]


def _history(syncd: Syncd, paper: str) -> list[dict[str, Any]]:
    return list(syncd.json("history", paper))


def _versions(syncd: Syncd, paper: str) -> list[tuple[str, int | None]]:
    return [(h["source"], h["version"]) for h in _history(syncd, paper)]


def _current_version(syncd: Syncd, arxiv_id: str) -> int:
    (paper,) = [p for p in syncd.papers().values() if p["arxiv_id"] == arxiv_id]
    return int(paper["version"])


def _event_types(syncd: Syncd) -> list[str]:
    return [e["type"] for e in syncd.json("events")]


def _sync(syncd: Syncd) -> str:
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    return outcome.err


class TestCycles:
    def test_flexmarl_linked_at_v2_stores_v1_with_its_own_title(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """v1 is fetched by versioned id, stored with its title and date, and announces nothing."""
        _sync(syncd)
        history = _history(syncd, FLEXMARL)
        assert [(h["source"], h["version"]) for h in history] == [
            ("seed:000_bae548b29664adf4.txt", None),
            ("arxiv:v1", 1),
            ("arxiv", 2),
        ]
        seed, v1, v2 = history
        assert v1["record"]["title"] == scenario.FLEXMARL_V1_TITLE
        assert v2["record"]["title"] == scenario.seed_title("FlexMARL")
        assert (v1["version_date"], v2["version_date"]) == (
            "2026-02-10T09:00:00+00:00",
            "2026-03-01T09:00:00+00:00",
        )
        assert seed["version_date"] is None
        assert _event_types(syncd) == LINKED
        assert _current_version(syncd, FLEXMARL) == 2
        # Both papers linked at v2 share one request.
        assert _id_lists(arxiv) == [[f"{FLEXMARL}v1", f"{OXYGEN}v1"]]

    def test_calibration_history_holds_both_seed_revisions_v1_and_v2(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Linked at v2, the calibration paper's history is its two seed revisions, v1, v2."""
        title, abstract = scenario.seed_title("Rethinking"), scenario.seed_abstract("Rethinking")
        arxiv.revise(CALIBRATION, title=title, abstract=abstract)
        _sync(syncd)
        history = _history(syncd, CALIBRATION)
        assert [(h["source"], h["version"]) for h in history] == [
            ("seed:000_bae548b29664adf4.txt", None),
            ("seed:001_486f742ac3512806.txt", None),
            ("arxiv:v1", 1),
            ("arxiv", 2),
        ]
        v1 = history[2]["record"]
        assert v1["title"] == scenario.CALIBRATION_V1_TITLE
        assert v1["abstract"] == scenario.list_abstract("Hu Xu, Zhaolong Xing")
        assert v1["authors"][0] == "Hu Xu"

    def test_a_jump_stores_every_version_and_publishes_one_event(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Seen at v2 then v4: v3 and v4 are stored, one paper.revised skips version 3."""
        _sync(syncd)
        arxiv.revise(NESTPIPE, title="NestPipe v2")
        _sync(syncd)
        arxiv.revise(NESTPIPE, title="NestPipe v3")
        arxiv.revise(NESTPIPE, title="NestPipe v4")
        before = syncd.json("events")[-1]["id"]
        arxiv.reset_log()
        _sync(syncd)
        (event,) = syncd.json("events", "--since", before)
        assert event["type"] == "paper.revised"
        assert event["changes"]["version"] == {"old": 2, "new": 4, "skipped_versions": [3]}
        assert event["changes"]["title"] == {"old": "NestPipe v2", "new": "NestPipe v4"}
        history = _history(syncd, NESTPIPE)
        assert [(h["source"], h["version"]) for h in history][1:] == [
            ("arxiv", 1),
            ("arxiv", 2),
            ("arxiv:v3", 3),
            ("arxiv", 4),
        ]
        assert history[3]["record"]["title"] == "NestPipe v3"
        assert history[3]["kinds"] == ["version", "title"]
        assert _id_lists(arxiv) == [[f"{NESTPIPE}v3"]]

    def test_a_complete_history_costs_no_request(self, syncd: Syncd, arxiv: FakeArxiv) -> None:
        """Once every version is in, cycles ask arXiv for nothing but the author's papers."""
        _sync(syncd)
        arxiv.reset_log()
        _sync(syncd)
        assert _id_lists(arxiv) == []


BACKFILL = {"when": lambda params: "id_list" in params}


def test_a_failed_backfill_changes_no_event_and_the_next_cycle_finishes(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """arXiv failing the backfill leaves the cycle's events as they are and loses nothing."""
    arxiv.inject(fa.status(503, times=3, **BACKFILL))
    err = _sync(syncd)
    assert "backfill_failed" in err
    assert _event_types(syncd) == LINKED
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv", 2)]
    assert _current_version(syncd, FLEXMARL) == 2

    _sync(syncd)
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _versions(syncd, OXYGEN)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _event_types(syncd) == LINKED
    assert _history(syncd, FLEXMARL)[1]["record"]["title"] == scenario.FLEXMARL_V1_TITLE


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(fa.truncate(0.6, **BACKFILL), id="truncated-xml"),
        pytest.param(fa.versions_ignored(**BACKFILL), id="wrong-version"),
    ],
)
def test_an_untrusted_backfill_answer_is_asked_again_in_halves(
    syncd: Syncd, arxiv: FakeArxiv, fault: fa.Fault
) -> None:
    """An answer refused once is not stored; its halves, asked again, bring every version."""
    arxiv.inject(fault)
    _sync(syncd)
    assert _id_lists(arxiv) == [
        [f"{FLEXMARL}v1", f"{OXYGEN}v1"],
        [f"{FLEXMARL}v1"],
        [f"{OXYGEN}v1"],
    ]
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _versions(syncd, OXYGEN)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _event_types(syncd) == LINKED
    assert _history(syncd, FLEXMARL)[1]["record"]["title"] == scenario.FLEXMARL_V1_TITLE
    assert _refusal_rows(syncd.database_url) == []


class TestCommand:
    @pytest.fixture
    def existing(self, syncd: Syncd, arxiv: FakeArxiv) -> Syncd:
        """A synced database whose linked-at-v2 papers lack v1, as before backfills."""
        _sync(syncd)
        forget_backfilled(syncd.database_url)
        arxiv.reset_log()
        return syncd

    def test_dry_run_counts_requests_and_sends_none(
        self, existing: Syncd, arxiv: FakeArxiv
    ) -> None:
        """--dry-run says papers, versions, requests and time, and asks arXiv nothing."""
        outcome = existing("backfill", "--dry-run")
        assert outcome.code == 0, outcome.err
        assert outcome.out.startswith("2 papers miss 2 versions: 1 request of up to 2 ids")
        assert arxiv.requests == []

    def test_fills_every_tracked_paper_then_has_nothing_to_do(
        self, existing: Syncd, arxiv: FakeArxiv
    ) -> None:
        """One request fills both papers, logs its progress, and a second run finds nothing."""
        outcome = existing("backfill")
        assert outcome.code == 0, outcome.err
        assert outcome.out.splitlines()[-1] == "backfilled 2 versions of 2 papers in 1 request"
        progress = [json.loads(line) for line in outcome.err.splitlines()]
        assert [p["requests_done"] for p in progress if p["event"] == "backfill_progress"] == [0, 1]
        assert _versions(existing, FLEXMARL)[1] == ("arxiv:v1", 1)
        assert _event_types(existing) == LINKED
        again = existing("backfill")
        assert again.out.strip() == "0 papers miss 0 versions: no request needed"
        assert len(_id_lists(arxiv)) == 1

    def test_a_failed_request_is_one_line_and_a_rerun_resumes(
        self, existing: Syncd, arxiv: FakeArxiv
    ) -> None:
        """arXiv failing ends with exit 1 and a line saying to run again, which then finishes."""
        arxiv.inject(fa.status(503, times=3))
        failed = existing("backfill")
        assert failed.code == 1
        assert failed.err.splitlines()[-1].startswith("syncd: error: arXiv did not answer")
        assert "run it again to resume" in failed.err
        assert existing("backfill").code == 0
        assert _versions(existing, OXYGEN)[1] == ("arxiv:v1", 1)

    def test_only_a_known_author(self, existing: Syncd) -> None:
        """--author naming no author syncd follows or followed is a usage error."""
        outcome = existing("backfill", "--author", "Nobody")
        assert outcome.code == 2
        assert "no author named 'Nobody'" in outcome.err


def test_what_arrived_before_a_failure_stays(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A backfill of two requests whose second fails keeps the first's versions, then resumes."""
    _sync(syncd)
    forget_backfilled(syncd.database_url)
    storage = Storage(syncd.database_url)
    settings = ArxivSettings(api_url=arxiv.url, request_interval=0, max_retries=0)
    try:
        plan = plan_backfill(storage.versions.gaps())
        split = BackfillPlan(
            plan.gaps, tuple((ident,) for batch in plan.batches for ident in batch)
        )
        arxiv.inject(fa.status(503, when=lambda params: params.get("id_list") == f"{OXYGEN}v1"))
        with ArxivClient(settings) as client, pytest.raises(RetryableUpstreamError):
            run_backfill(storage, client, split)
        assert [g.arxiv_id for g in storage.versions.gaps() if g.missing] == [OXYGEN]
        with ArxivClient(settings) as client:
            done = run_backfill(storage, client, plan_backfill(storage.versions.gaps()))
        assert (done.requests_done, done.versions_stored) == (1, 1)
    finally:
        storage.close()


class TestHistoryOutput:
    def test_the_table_shows_the_version_date_beside_observed(self, syncd: Syncd) -> None:
        """The history table has arXiv's date of each version next to when syncd saw it."""
        _sync(syncd)
        lines = syncd("history", FLEXMARL).out.splitlines()
        assert lines[1].split()[:6] == ["SEQ", "OBSERVED", "(UTC)", "VERSION", "DATE", "(UTC)"]
        assert lines[2].split()[3] == "-"  # the seed revision has no version date
        assert lines[3].split()[3:5] == ["2026-02-10", "09:00:00"]

    def test_field_shows_how_one_field_evolved(self, syncd: Syncd) -> None:
        """--field title prints each title once, with the versions that carried it."""
        _sync(syncd)
        lines = syncd("history", FLEXMARL, "--field", "title").out.splitlines()
        assert lines[1].split() == ["VERSIONS", "TITLE"]
        assert lines[2].startswith("seed, v2  FlexMARL: Graph-Driven")
        assert lines[3].startswith("v1        Rollout-Training Co-Design")
        as_json = syncd.json("history", FLEXMARL, "--field", "title")
        assert as_json[1] == {"value": scenario.FLEXMARL_V1_TITLE, "versions": ["v1"]}

    def test_field_must_be_a_record_field(self, syncd: Syncd) -> None:
        """An unknown field is a usage error naming the choices."""
        _sync(syncd)
        with pytest.raises(SystemExit) as exit_info:
            syncd("history", FLEXMARL, "--field", "colour")
        assert exit_info.value.code == 2


# -- versions arXiv refuses --------------------------------------------------------

NEWCOMER = "2611.04242"
REFUSALS = {
    "error-feed": False,  # the whole request answered with arXiv's error feed
    "withheld": True,  # the answer lacks the version, so none of it is trusted
}


def _publish_newcomer_at_v3(arxiv: FakeArxiv) -> None:
    """A new paper of the author, already at v3 when syncd first sees it."""
    first = fa.make_record(
        NEWCOMER,
        title="Pipelined embeddings for sparse recommendation",
        abstract="We pipeline embedding lookups across accelerators.",
        authors=(scenario.AUTHOR, "Zhaolong Xing"),
        primary_category="cs.DC",
        categories=("cs.DC",),
    )
    arxiv.publish(first)
    arxiv.publish(replace(first, version=2, updated=None, comment="v2: more runs"))
    arxiv.publish(replace(first, version=3, updated=None, comment="v3: camera ready"))


def _refusal_rows(database_url: str) -> list[tuple[str, int, int, bool]]:
    """(arxiv id, version, failures, set aside) of every version arXiv refused."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT arxiv_id, version, failures, next_try_at FROM version_refusals"
                    " ORDER BY arxiv_id, version"
                )
            ).all()
    finally:
        engine.dispose()
    return [(r.arxiv_id, r.version, r.failures, r.next_try_at is not None) for r in rows]


def _time_passes(database_url: str) -> None:
    """Bring every set-aside version's next try to now, as if its wait were over."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "UPDATE version_refusals SET next_try_at = :past WHERE next_try_at IS NOT NULL"
                ),
                {"past": datetime(2000, 1, 1, tzinfo=UTC)},
            )
    finally:
        engine.dispose()


def _set_aside_gauge(syncd: Syncd) -> float:
    """``syncd_versions_set_aside`` as a scrape of the daemon's store collector shows it."""
    app = App.open(load_settings(syncd.config))
    registry = CollectorRegistry()
    try:
        register_store_collector(app.store_snapshot, registry=registry)
        value = registry.get_sample_value("syncd_versions_set_aside")
    finally:
        app.close()
    assert value is not None
    return value


def _asked_for(arxiv: FakeArxiv, versioned: str) -> bool:
    return any(versioned in ids for ids in _id_lists(arxiv))


@pytest.mark.parametrize("withheld", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_earlier_version_never_blocks_the_authors_other_changes(
    syncd: Syncd, arxiv: FakeArxiv, withheld: bool
) -> None:
    """A new paper at v3 whose v1 arXiv refuses: NestPipe's v2 is announced in the same cycle.

    The new paper waits while its v1 may still come (it may be a seed's
    earlier version); after SET_ASIDE_AFTER refusals v1 is set aside, the
    paper is decided on the versions that came back, and the set-aside
    version shows in the metric and in `syncd backfill --dry-run`.
    """
    _sync(syncd)
    last = syncd.json("events")[-1]["id"]
    _publish_newcomer_at_v3(arxiv)
    arxiv.revise(NESTPIPE, title="NestPipe, revised")
    arxiv.inject_always(fa.refused_version(f"{NEWCOMER}v1", withheld=withheld))

    _sync(syncd)
    (revised,) = syncd.json("events", "--since", last)
    assert (revised["type"], revised["paper"]["arxiv_id"]) == ("paper.revised", NESTPIPE)
    assert NEWCOMER not in {p["arxiv_id"] for p in syncd.papers().values()}
    assert _refusal_rows(syncd.database_url) == [(NEWCOMER, 1, 1, False)]

    for _ in range(SET_ASIDE_AFTER - 1):
        _sync(syncd)
    assert _refusal_rows(syncd.database_url) == [(NEWCOMER, 1, SET_ASIDE_AFTER, True)]
    added = syncd.json("events", "--since", revised["id"])
    assert [(e["type"], e["paper"]["arxiv_id"]) for e in added] == [("paper.added", NEWCOMER)]
    assert _versions(syncd, NEWCOMER) == [("arxiv:v2", 2), ("arxiv", 3)]
    assert _set_aside_gauge(syncd) == 1

    dry = syncd("backfill", "--dry-run")
    assert dry.code == 0, dry.err
    assert dry.out.splitlines()[0] == "1 paper misses 1 version: no request needed"
    assert dry.out.splitlines()[1].startswith(
        f"1 version set aside after repeated refusals: {NEWCOMER}v1; next try at 20"
    )
    arxiv.reset_log()
    _sync(syncd)
    assert not _asked_for(arxiv, f"{NEWCOMER}v1")


@ON_BOTH_DATABASES  # issue 29/30's acceptance: on both databases
def test_a_dry_run_names_every_version_set_aside(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """`backfill --dry-run` names each version set aside, the versions of papers it does not
    backfill (refused while linking an entry that stayed a candidate) and past ten alike."""
    _sync(syncd)
    refused = [f"2611.{number:05d}v1" for number in range(4200, 4212)]
    storage = Storage(syncd.database_url)
    try:
        storage.versions.refused(dict.fromkeys(refused, "HTTP 400"), lambda _: timedelta(hours=1))
        assert storage.versions.set_aside_count() == 12
    finally:
        storage.close()
    arxiv.reset_log()
    dry = syncd("backfill", "--dry-run")
    assert dry.code == 0, dry.err
    nothing, aside = dry.out.splitlines()
    assert nothing == "0 papers miss 0 versions: no request needed"
    assert aside.startswith(
        f"12 versions set aside after repeated refusals: {', '.join(refused)}; next try at 20"
    )
    assert arxiv.requests == []
    # An author's backfill names only the versions of that author's papers: none here.
    mine = syncd("backfill", "--dry-run", "--author", scenario.AUTHOR)
    assert mine.out.splitlines() == [nothing]


@pytest.mark.parametrize("withheld", REFUSALS.values(), ids=REFUSALS.keys())
def test_one_refused_id_leaves_the_rest_of_its_batch_and_later_batches_stored(
    syncd: Syncd, arxiv: FakeArxiv, withheld: bool
) -> None:
    """A backfill batch holding a refused id stores the others; later batches go on."""
    arxiv.revise(LORA)  # linked at v2: its v1 is missing too
    _sync(syncd)
    forget_backfilled(syncd.database_url)
    refused = f"{FLEXMARL}v1"
    arxiv.inject_always(fa.refused_version(refused, withheld=withheld))
    arxiv.reset_log()
    storage = Storage(syncd.database_url)
    settings = ArxivSettings(api_url=arxiv.url, request_interval=0, max_retries=0)
    try:
        plan = plan_backfill(storage.versions.gaps())
        ids = sorted((i for batch in plan.batches for i in batch), key=lambda i: i != refused)
        assert len(ids) == 3
        split = replace(plan, batches=(tuple(ids[:2]), tuple(ids[2:])))
        with ArxivClient(settings) as client:
            done = run_backfill(storage, client, split)
        assert done.versions_stored == 2
    finally:
        storage.close()
    assert _id_lists(arxiv) == [ids[:2], ids[:1], ids[1:2], ids[2:]]
    assert _versions(syncd, OXYGEN)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _versions(syncd, LORA)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv", 2)]
    assert _refusal_rows(syncd.database_url) == [(FLEXMARL, 1, 1, False)]

    for _ in range(SET_ASIDE_AFTER - 1):
        outcome = syncd("backfill")
        assert outcome.code == 0, outcome.err
    assert _refusal_rows(syncd.database_url) == [(FLEXMARL, 1, SET_ASIDE_AFTER, True)]
    assert _set_aside_gauge(syncd) == 1
    dry = syncd("backfill", "--dry-run")
    assert f"set aside after repeated refusals: {refused}; next try at" in dry.out
    arxiv.reset_log()
    assert syncd("backfill").code == 0
    assert arxiv.requests == []


def test_a_set_aside_version_served_again_is_fetched_at_its_next_try(
    syncd: Syncd, arxiv: FakeArxiv
) -> None:
    """Once arXiv serves a set-aside version again, the retry after its wait stores it."""
    _sync(syncd)
    forget_backfilled(syncd.database_url)
    refused = f"{FLEXMARL}v1"
    arxiv.inject_always(fa.refused_version(refused))
    for _ in range(SET_ASIDE_AFTER):
        assert syncd("backfill").code == 0
    assert _refusal_rows(syncd.database_url) == [(FLEXMARL, 1, SET_ASIDE_AFTER, True)]
    arxiv.clear_faults()
    arxiv.reset_log()
    assert syncd("backfill").code == 0
    assert arxiv.requests == []  # still set aside: its next try has not come

    _time_passes(syncd.database_url)
    outcome = syncd("backfill")
    assert outcome.code == 0, outcome.err
    assert _id_lists(arxiv) == [[refused]]
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
    assert _refusal_rows(syncd.database_url) == []
    assert _set_aside_gauge(syncd) == 0


def test_arxiv_failing_the_linking_fetch_blames_no_version(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A 503 on every try of the earlier-versions fetch fails the cycle as before, blaming none."""
    _sync(syncd)
    _publish_newcomer_at_v3(arxiv)
    arxiv.inject(fa.status(503, times=3, **BACKFILL))
    assert syncd("sync").code == 1
    assert _refusal_rows(syncd.database_url) == []
    _sync(syncd)
    assert _versions(syncd, NEWCOMER) == [("arxiv:v1", 1), ("arxiv:v2", 2), ("arxiv", 3)]


def test_refusal_counts_are_consecutive(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """A version refused once and then served loses its count: refusals must come in a row."""
    _sync(syncd)
    forget_backfilled(syncd.database_url)
    arxiv.inject(fa.refused_version(f"{FLEXMARL}v1", times=2))
    assert syncd("backfill").code == 0
    assert _refusal_rows(syncd.database_url) == [(FLEXMARL, 1, 1, False)]
    assert syncd("backfill").code == 0
    assert _refusal_rows(syncd.database_url) == []
    assert _versions(syncd, FLEXMARL)[1:] == [("arxiv:v1", 1), ("arxiv", 2)]
