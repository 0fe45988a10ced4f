"""Authors at run time and review (issue 22, items 4 and 5): the CLI, the API, a running daemon."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from lxml import html as lxml_html

from syncd.logs import configure_logging
from syncd.storage.schema import (
    author_decisions_table,
    authors_table,
    paper_authors_table,
    papers_table,
)
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv
from tests.helpers import eventually
from tests.integration.ada import (
    ADA,
    ADA_PAPERS,
    ADMIN_TOKEN,
    GOOD_ORCID,
    authors,
    publish_ada,
    write_csv,
)
from tests.integration.conftest import Syncd, serving, sync_ok
from tests.integration.daemons import Daemon, start_replicas
from tests.receiver import Receiver
from tests.scenario import AUTHOR


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: run-time authors, their imports and review decisions (issue 30, items 8
    and 14) are rows and locks of each dialect."""
    return database_for(request)


HOUR = timedelta(hours=1)


def asked_for(arxiv: FakeArxiv, name: str) -> bool:
    return any(name in r.params.get("search_query", "") for r in arxiv.requests)


def table_rows(url: str, table: sa.Table) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.select(table).order_by(*table.c))]
    finally:
        engine.dispose()


class TestImport:
    def test_a_bad_row_on_line_7_imports_nothing(self, syncd: Syncd, tmp_path: Path) -> None:
        """All or none: the bad ORCID checksum on line 7 is named, and no author is added."""
        rows = [f"Author {n},,," for n in range(2, 7)] + [f"Author 7,{GOOD_ORCID[:-1]}8,,"]
        outcome = syncd("authors", "import", str(write_csv(tmp_path / "a.csv", rows)))
        assert outcome.code == 2
        assert ":7: orcid: " in outcome.err
        assert "not an ORCID iD" in outcome.err
        assert outcome.err.count(".csv:") == 1  # only the bad row is named
        assert set(authors(syncd)) == {AUTHOR}

    def test_every_bad_row_is_named(self, syncd: Syncd, tmp_path: Path) -> None:
        rows = ["Good,,,", ",,,", f"{AUTHOR},,,", "Good,,,", "Odd,,bad id!,", "Short,"]
        outcome = syncd("authors", "import", str(write_csv(tmp_path / "b.csv", rows)))
        assert outcome.code == 2
        for line in (3, 4, 5, 6, 7):
            assert f".csv:{line}: " in outcome.err, outcome.err
        assert "configured in the config file" in outcome.err
        assert set(authors(syncd)) == {AUTHOR}

    def test_importing_a_good_file_twice_changes_nothing(
        self, syncd: Syncd, tmp_path: Path
    ) -> None:
        rows = [
            f"{ADA},{GOOD_ORCID},,",
            'Grace Hopper,,hopper_g_1,"au:""Hopper_G"""',
            "Emmy Noether,,,",
        ]
        csv = write_csv(tmp_path / "good.csv", rows)
        first = syncd("authors", "import", str(csv))
        assert first.code == 0, first.err
        assert "3 added" in first.out
        before = table_rows(syncd.database_url, authors_table)
        second = syncd("authors", "import", str(csv))
        assert second.code == 0, second.err
        assert second.out.strip() == "0 added, 0 updated, 3 unchanged"
        assert table_rows(syncd.database_url, authors_table) == before
        listed = authors(syncd)
        assert listed["Grace Hopper"]["query"] == 'au:"Hopper_G"'
        assert listed["Grace Hopper"]["arxiv_author_id"] == "hopper_g_1"
        assert listed[ADA]["orcid"] == GOOD_ORCID
        assert {a["source"] for a in listed.values()} == {"config", "runtime"}


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.csv"
    os.mkfifo(path)  # nobody ever writes to it: opening it to read would wait forever
    return path


def _folder(tmp_path: Path) -> Path:
    path = tmp_path / "folder.csv"
    path.mkdir()
    return path


def _ten_megabyte_cell(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "huge.csv", [f"Ada,,,{'x' * 10_000_000}"])


# name -> (makes the file, what the one-line error says about it)
UNREADABLE_CSV: dict[str, tuple[Callable[[Path], Path], str]] = {
    "dev-zero": (lambda _: Path("/dev/zero"), "not a regular file (a character device)"),
    "fifo": (_fifo, "not a regular file (a FIFO)"),
    "directory": (_folder, "not a regular file (a directory)"),
    "ten-megabyte-cell": (_ten_megabyte_cell, "the file is larger than the 4 MiB (4194304 bytes)"),
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", UNREADABLE_CSV.keys())
def test_an_authors_file_that_is_not_a_small_regular_file_exits_2_at_once(
    syncd: Syncd, tmp_path: Path, case: str
) -> None:
    """/dev/zero, a FIFO, a folder or a 10 MB cell: exit 2 at once in one line, nothing imported."""
    make, reason = UNREADABLE_CSV[case]
    path = make(tmp_path)
    started = time.monotonic()
    outcome = syncd("authors", "import", str(path))
    assert time.monotonic() - started < 10
    assert outcome.code == 2, outcome.err
    assert outcome.err.startswith(f"syncd: error: {path}: {reason}")
    assert outcome.err.count("\n") == 1  # one line, no traceback
    assert set(authors(syncd)) == {AUTHOR}


def test_a_cell_longer_than_any_field_is_a_bad_row(syncd: Syncd, tmp_path: Path) -> None:
    """A 200 KB cell within the size cap is its line's error (exit 2), not a traceback."""
    path = write_csv(tmp_path / "long.csv", ["Ada,,,", f"Grace,,,{'x' * 200_000}"])
    outcome = syncd("authors", "import", str(path))
    assert outcome.code == 2, outcome.err
    assert f"{path}:3: " in outcome.err
    assert "Traceback" not in outcome.err
    assert set(authors(syncd)) == {AUTHOR}


class TestRefusals:
    def test_configured_authors_are_changed_in_the_file(self, syncd: Syncd) -> None:
        for args in (("remove", AUTHOR), ("add", AUTHOR, "--query", 'au:"X"')):
            outcome = syncd("authors", *args)
            assert outcome.code == 2
            assert "configured in the config file" in outcome.err

    def test_unknown_names_and_ids_are_usage_errors(self, syncd: Syncd) -> None:
        assert syncd("authors", "add", ADA).code == 0
        cases = {
            ("review", "Nobody"): "no author named 'Nobody'",
            ("remove", "Nobody"): "no followed author named 'Nobody'",
            ("confirm", "Nobody", "2602.10001"): "no followed author named 'Nobody'",
            ("confirm", ADA, "2602.99999"): "not candidates of Ada Lovelace: 2602.99999",
            ("reject", ADA, "not-an-id"): "not an arXiv id: 'not-an-id'",
        }
        for args, message in cases.items():
            outcome = syncd("authors", *args)
            assert (outcome.code, message in outcome.err) == (2, True), (args, outcome.err)

    def test_a_bad_seed_file_is_refused(self, syncd: Syncd, tmp_path: Path) -> None:
        missing = tmp_path / "missing.txt"
        outcome = syncd("authors", "add", ADA, "--seed", str(missing))
        assert outcome.code == 2
        assert "missing.txt" in outcome.err
        assert set(authors(syncd)) == {AUTHOR}


class TestReview:
    def test_confirm_tracks_and_announces_reject_keeps_out(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Candidates are listed with their reason; confirm publishes paper.added; a rejected
        paper never comes back across later syncs."""
        publish_ada(arxiv)
        assert syncd("authors", "add", ADA).code == 0
        sync_ok(syncd)
        review = syncd("authors", "review", ADA)
        assert review.code == 0
        for arxiv_id in ADA_PAPERS:
            assert arxiv_id in review.out
        confirmed = syncd("authors", "confirm", ADA, "2602.10001")
        assert confirmed.code == 0, confirmed.err
        assert "1 paper.added published" in confirmed.out
        added = [e for e in syncd.json("events") if _arxiv_id(e) == "2602.10001"]
        assert [e["type"] for e in added] == ["paper.added"]
        assert added[0]["record"]["title"] == f"A note by {ADA} and Charles Babbage"
        assert syncd("authors", "reject", ADA, "2602.10002v1").code == 0
        # Deciding again is harmless.
        assert syncd("authors", "reject", ADA, "2602.10002").code == 0
        for _ in range(2):
            arxiv.revise("2602.10002", title="A revised note")
            sync_ok(syncd)
        papers = {p["arxiv_id"]: p for p in syncd.json("papers", "--author", ADA)}
        assert papers["2602.10001"]["status"] == "tracked"
        assert papers["2602.10002"]["status"] == "rejected"
        assert papers["2602.10002"]["title"] != "A revised note"
        assert papers["2602.10003"]["status"] == "candidate"
        assert not [e for e in syncd.json("events") if _arxiv_id(e) == "2602.10002"]
        review = syncd("authors", "review", ADA)
        assert "2602.10002" not in review.out and "2602.10001" not in review.out
        decisions = {
            row[2]: row[3] for row in table_rows(syncd.database_url, author_decisions_table)
        }
        assert decisions == {"2602.10001": "confirmed", "2602.10002": "rejected"}
        listed = authors(syncd)[ADA]
        assert (listed["tracked"], listed["candidates"]) == (1, 1)
        assert listed["last_success"] is not None


def cycles_finished(daemon: Daemon) -> int:
    # Read while the daemon writes: its last line may be half written, so no JSON parsing.
    return daemon.log.read_text().count('"cycle_finished"')


def authors_seen(replica: Daemon) -> int:
    """Authors' cycles a replica ran or left to another (each cycle, one per author)."""
    text = replica.log.read_text()
    return text.count('"cycle_finished"') + text.count('"cycle_skipped"')


def _daemon(syncd: Syncd, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    monkeypatch.setenv("SYNCD_HTTP_ADMIN_TOKEN", ADMIN_TOKEN)
    return Daemon(syncd, receiver)


def test_a_running_daemon_follows_authors_added_and_removed(
    syncd: Syncd,
    arxiv: FakeArxiv,
    receiver: Receiver,
    daemons: list[Daemon],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`authors add` while `syncd run` runs: its next cycle asks arXiv for the author;
    `authors remove`: no more requests for them.  No restart."""
    publish_ada(arxiv)
    daemon = _daemon(syncd, receiver, monkeypatch)
    daemons.append(daemon)
    assert receiver.wait_for(7, timeout=20)  # the configured author's first cycle
    assert not asked_for(arxiv, ADA)
    assert syncd("authors", "add", ADA).code == 0
    eventually(lambda: asked_for(arxiv, ADA), 20, "a request for the new author")
    eventually(lambda: authors(syncd)[ADA]["last_success"] is not None, 20, "its cycle")
    assert authors(syncd)[ADA]["candidates"] == len(ADA_PAPERS)
    assert syncd("authors", "remove", ADA).code == 0
    finished = cycles_finished(daemon)
    # A cycle may have begun before the removal: wait for two more, then listen.
    eventually(
        lambda: cycles_finished(daemon) >= finished + 2,
        20,
        "two more cycles",
    )
    arxiv.reset_log()
    eventually(
        lambda: cycles_finished(daemon) >= finished + 4,
        20,
        "two cycles after the removal",
    )
    assert arxiv.requests and not asked_for(arxiv, ADA)
    assert syncd.papers()["2602.10001"]["status"] == "candidate"  # its papers stay
    daemon.stop()


def test_the_api_adds_confirms_and_rejects_with_the_admin_token(
    syncd: Syncd,
    arxiv: FakeArxiv,
    receiver: Receiver,
    daemons: list[Daemon],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """POST /api/v1/authors and /confirm on a running daemon: the confirmed candidate's
    paper.added reaches a real receiver; a wrong token is 401; the token is never logged."""
    publish_ada(arxiv)
    arxiv.claim(GOOD_ORCID)  # her ORCID is known to arXiv, with nothing claimed
    daemon = _daemon(syncd, receiver, monkeypatch)
    daemons.append(daemon)
    base = f"http://127.0.0.1:{daemon.port}/api/v1/authors"
    good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    wrong = {"Authorization": "Bearer " + "x" * len(ADMIN_TOKEN)}
    assert httpx.post(base, json={"name": ADA}, headers=wrong).status_code == 401
    assert httpx.post(base, json={"name": ADA}).status_code == 401
    created = httpx.post(base, json={"name": ADA, "orcid": GOOD_ORCID}, headers=good)
    assert created.status_code == 201, created.text
    assert created.json()["source"] == "runtime"
    again = httpx.post(base, json={"name": ADA, "orcid": GOOD_ORCID}, headers=good)
    assert again.status_code == 200

    def held() -> int:
        return int(httpx.get(f"{base}/{ADA}").json()["candidates"])

    eventually(lambda: held() == len(ADA_PAPERS), 20, "Ada's candidates")
    detail = httpx.get(f"{base}/{ADA}").json()
    assert {c["arxiv_id"] for c in detail["candidate_papers"]} == set(ADA_PAPERS)
    confirm = httpx.post(f"{base}/{ADA}/confirm", json={"ids": ["2602.10001"]}, headers=good)
    assert confirm.status_code == 200, confirm.text
    assert len(confirm.json()["events"]) == 1

    def announced() -> bool:
        return any(
            d.json["type"] == "paper.added" and d.json["data"]["paper"]["arxiv_id"] == "2602.10001"
            for d in receiver.delivered
        )

    eventually(announced, 20, "paper.added delivered")
    reject = httpx.post(f"{base}/{ADA}/reject", json={"ids": ["2602.10002"]}, headers=good)
    assert reject.status_code == 200, reject.text
    assert reject.json()["events"] == []
    refused = httpx.post(f"{base}/{ADA}/reject", json={"ids": ["2602.99999"]}, headers=good)
    assert refused.status_code == 404
    assert httpx.delete(f"{base}/{AUTHOR}", headers=good).status_code == 409
    assert httpx.delete(f"{base}/{ADA}", headers=good).json()["followed"] is False
    daemon.stop()
    assert ADMIN_TOKEN not in daemon.log.read_text()


def test_admin_routes_are_404_without_a_token_and_log_no_token(syncd: Syncd) -> None:
    """No token configured: the writes do not exist (404), the reads are public.  With one,
    a missing or wrong token is 401, a good one works, and the log never holds it."""
    assert syncd("db", "upgrade").code == 0
    with serving(syncd) as site:
        assert site.get("/api/v1/authors").status_code == 200
        for method, path, body in (
            ("POST", "/api/v1/authors", {"name": ADA}),
            ("DELETE", f"/api/v1/authors/{AUTHOR}", None),
            ("POST", f"/api/v1/authors/{AUTHOR}/confirm", {"ids": ["2602.10001"]}),
        ):
            answer = site.http.request(method, path, json=body, headers={"Authorization": "x"})
            assert answer.status_code == 404, (method, path)
    syncd.sections = f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'
    log = io.StringIO()
    with serving(syncd) as site:
        configure_logging("debug", "json", log)
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        wrong = {"Authorization": f"Bearer {ADMIN_TOKEN[:-1]}"}
        assert (
            site.http.post("/api/v1/authors", json={"name": ADA}, headers=wrong).status_code == 401
        )
        bad = site.http.post("/api/v1/authors", json={"name": ADA, "orcid": "1"}, headers=good)
        assert bad.status_code == 400 and "orcid" in bad.json()["error"]
        assert (
            site.http.post("/api/v1/authors", json={"name": ADA}, headers=good).status_code == 201
        )
        gone = site.http.delete(f"/api/v1/authors/{ADA}", headers=good)
        assert gone.status_code == 200 and gone.json()["followed"] is False
        assert site.http.delete(f"/api/v1/authors/{AUTHOR}", headers=good).status_code == 409
        assert site.get("/api/v1/authors/Nobody").status_code == 404
    text = log.getvalue()
    assert "http_request" in text  # the log was captured
    assert ADMIN_TOKEN not in text and ADMIN_TOKEN[:-1] not in text


def _statuses(syncd: Syncd) -> dict[str, str]:
    """Each paper's status as the author holds it, by arXiv id."""
    ids = {row[0]: row[2] for row in table_rows(syncd.database_url, papers_table)}
    return {ids[row[0]]: row[2] for row in table_rows(syncd.database_url, paper_authors_table)}


def test_a_rejected_candidate_is_not_theirs_until_confirmed(syncd: Syncd, arxiv: FakeArxiv) -> None:
    """Rejecting removes nothing and announces nothing: the paper is "not theirs" (rejected,
    not removed), history and all; confirming takes it back, announced as added."""
    publish_ada(arxiv)
    assert syncd("authors", "add", ADA).code == 0
    sync_ok(syncd)
    events = len(syncd.json("events"))
    assert syncd("authors", "reject", ADA, "2602.10003").code == 0
    assert _statuses(syncd)["2602.10003"] == "rejected"
    assert len(syncd.json("events")) == events  # no paper.removed
    assert syncd("history", "2602.10003").code == 0
    sync_ok(syncd)  # later cycles leave it alone
    assert _statuses(syncd)["2602.10003"] == "rejected"
    assert syncd("authors", "confirm", ADA, "2602.10003").code == 0
    assert _statuses(syncd)["2602.10003"] == "tracked"
    (added,) = syncd.json("events")[events:]
    assert (added["type"], added["paper"]["arxiv_id"]) == ("paper.added", "2602.10003")


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_every_replica_follows_an_author_added_at_run_time(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Two replicas on PostgreSQL: both consider the added author at their next cycles
    (one syncs it, the other sees the claim), and both let go of it once removed."""
    publish_ada(arxiv)
    replicas = start_replicas(daemons, 2, syncd, receiver)
    assert receiver.wait_for(7, timeout=30)
    assert syncd("authors", "add", ADA).code == 0

    def considered(replica: Daemon) -> bool:
        return any(
            ADA in line and ('"cycle_finished"' in line or '"cycle_skipped"' in line)
            for line in replica.log.read_text().splitlines()
        )

    for replica in replicas:
        eventually(lambda r=replica: considered(r), 30, "the added author in each replica")
    assert syncd("authors", "remove", ADA).code == 0

    def two_more_cycles() -> None:
        for replica in replicas:
            before = authors_seen(replica)
            eventually(lambda r=replica, n=before: authors_seen(r) >= n + 2, 20, "cycles")

    two_more_cycles()  # a cycle begun before the removal may still ask for her
    arxiv.reset_log()
    two_more_cycles()
    assert arxiv.requests and not asked_for(arxiv, ADA)
    for replica in replicas:
        replica.stop()


def _arxiv_id(event: dict[str, Any]) -> str | None:
    """The arXiv id of the paper an event names; None for an author's event (author.added)."""
    paper = event["paper"]
    return None if paper is None else paper["arxiv_id"]


def _admin_site_sections(syncd: Syncd) -> None:
    syncd.sections = f'[http]\nadmin_token = "{ADMIN_TOKEN}"\n'


class TestDecisionsTakeOnlyCandidates:
    """Confirm and reject decide candidates: a tracked paper is not one (issue 30, item 14)."""

    def test_confirm_or_reject_of_a_tracked_paper_is_a_404_that_changes_nothing(
        self, syncd: Syncd, arxiv: FakeArxiv
    ) -> None:
        """Ada's claimed paper is tracked: confirming it publishes no second paper.added,
        rejecting it removes nothing; both are 404s naming it."""
        publish_ada(arxiv)
        arxiv.claim(GOOD_ORCID, "2602.10001")
        assert syncd("authors", "add", ADA, "--orcid", GOOD_ORCID).code == 0
        sync_ok(syncd)
        _admin_site_sections(syncd)
        before = (syncd.papers(), syncd.json("events"))
        assert before[0]["2602.10001"]["status"] == "tracked"
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with serving(syncd) as site:
            for verb in ("confirm", "reject"):
                answer = site.http.post(
                    f"/api/v1/authors/{ADA}/{verb}", json={"ids": ["2602.10001"]}, headers=good
                )
                assert answer.status_code == 404, (verb, answer.text)
                assert "2602.10001" in answer.json()["error"]
        assert (syncd.papers(), syncd.json("events")) == before


class TestFollowingAgain:
    def test_an_author_removed_and_added_again_alike_is_followed_again(self, syncd: Syncd) -> None:
        """`authors add` of a removed author with the same definition follows them again:
        "updated", not "unchanged" (which would leave them unfollowed)."""
        assert syncd("authors", "add", ADA, "--orcid", GOOD_ORCID).code == 0
        assert syncd("authors", "remove", ADA).code == 0
        assert authors(syncd)[ADA]["followed"] is False
        again = syncd("authors", "add", ADA, "--orcid", GOOD_ORCID)
        assert again.code == 0, again.err
        assert again.out.startswith(f"{ADA}: updated")
        assert authors(syncd)[ADA]["followed"] is True

    def test_reposting_a_followed_author_with_a_new_query_answers_200(self, syncd: Syncd) -> None:
        """POST of a followed author: 201 only when added; with a new query it is updated (200)
        and the query is the new one."""
        _admin_site_sections(syncd)
        assert syncd("db", "upgrade").code == 0
        good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with serving(syncd) as site:
            added = site.http.post("/api/v1/authors", json={"name": ADA}, headers=good)
            assert added.status_code == 201, added.text
            body = {"name": ADA, "query": 'au:"Lovelace_A"'}
            updated = site.http.post("/api/v1/authors", json=body, headers=good)
            assert updated.status_code == 200, updated.text
            assert updated.json()["query"] == 'au:"Lovelace_A"'
            same = site.http.post("/api/v1/authors", json=body, headers=good)
            assert same.status_code == 200, same.text


def test_the_pages_and_the_list_say_when_the_scheduler_syncs_each_author(
    syncd: Syncd, arxiv: FakeArxiv, receiver: Receiver, daemons: list[Daemon]
) -> None:
    """Under `syncd run` (hourly, on the hour, no jitter) an author added at run time is
    synced by the scheduler's next cycle, the one the status strip names: its page, the API
    and `authors list` say so, not "now".  The author synced at start waits for the first
    cycle at least half an hour later (the replicas' claim window)."""
    publish_ada(arxiv)
    daemon = Daemon(syncd, receiver, interval=3600)
    daemons.append(daemon)
    eventually(daemon.ready, 20, "ready")
    assert syncd("authors", "add", ADA).code == 0
    asked = datetime.now(UTC)
    strip = lxml_html.fromstring(daemon.get("/").text)
    (when,) = strip.xpath("//aside[@class='sync-status']//span[@class='next']/time/@datetime")
    scheduled = datetime.fromisoformat(when)
    listed = {name: datetime.fromisoformat(a["next_sync"]) for name, a in authors(syncd).items()}
    assert listed[ADA] == scheduled
    assert daemon.get(f"/api/v1/authors/{ADA}").json()["next_sync"] == listed[ADA].isoformat()
    page = lxml_html.fromstring(daemon.get("/authors/Ada%20Lovelace").text)
    line = page.xpath("//p[@class='status-line']")[0].text_content()
    assert line.endswith(f"next sync {scheduled:%Y-%m-%d %H:%M}")
    # Its first cycle began a moment before ``asked``: a claim window of 30 minutes.
    later = scheduled if scheduled - asked > timedelta(minutes=30) else scheduled + HOUR
    if abs(scheduled - asked - timedelta(minutes=30)) > timedelta(seconds=20):
        assert listed[AUTHOR] == later
    daemon.stop()
