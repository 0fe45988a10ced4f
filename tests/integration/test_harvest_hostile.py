"""A harvest against an OAI-PMH server that answers badly: issue 30's probes, items 1, 2 and 4 to 7.

Each answer is built from the fake arXiv's own records (``tests.fakeoai.raw_paper``)
with ``tests.oaixml``, then broken the way the review broke it.  Whatever the page
says, a harvest ends, records why it stopped (``harvest_state.last_error``) without
a traceback, stores nothing it did not check, and the pages keep answering.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from syncd.config import load_settings
from syncd.errors import PermanentUpstreamError
from syncd.service.app import App
from syncd.service.harvest import harvest
from syncd.storage import HarvestState, Storage
from syncd.storage.schema import harvest_state_table
from tests import fakearxiv as fa
from tests.conftest import BOTH_DATABASES, database_for
from tests.fakearxiv import FakeArxiv
from tests.fakeoai import OAI_CONTENT_TYPE, is_oai, raw_paper
from tests.integration.conftest import Syncd, serving
from tests.integration.harvests import DAY, NEW_PAPER, harvesting, story, told
from tests.oaixml import RawPaper, error_xml, list_records_xml, record_xml
from tests.scenario import LORA, NESTPIPE


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest) -> str:
    """Both databases: the review's harvest probes (issue 30, items 1 to 7) hold on each,
    PostgreSQL's column bounds and JSONB included."""
    return database_for(request)


STAMP = "2026-07-01T12:00:00Z"
# Papers nobody here follows, for pages that must not matter.
STRANGERS = [RawPaper(f"2607.1{n:04d}", authors="Grace Hopper") for n in range(1, 4)]


def oai_page(
    arxiv: FakeArxiv,
    arxiv_ids: Sequence[str],
    *,
    token: str | None = None,
    response_date: str = STAMP,
    before: bytes = b"",
    mutate: Callable[[bytes], bytes] = lambda body: body,
) -> bytes:
    """A ListRecords page of the fake's papers ``arxiv_ids`` as arXivRaw writes them;
    ``before`` is raw XML put before them (a bad record), ``mutate`` breaks the rest."""
    papers = arxiv.papers
    records = [raw_paper(papers[i], DAY, arxiv.oai.wrap) for i in arxiv_ids]
    body = list_records_xml(records, token=token, response_date=response_date)
    body = body.replace(b"<ListRecords>\n", b"<ListRecords>\n" + before, 1)
    return mutate(body)


def answers(page: bytes, *, when: Callable[[Any], bool] = is_oai, times: int = 1) -> fa.Fault:
    return fa.body(page, content_type=OAI_CONTENT_TYPE, when=when, times=times)


def harvest_state(syncd: Syncd) -> HarvestState:
    storage = Storage(syncd.database_url)
    try:
        return storage.harvests.state()
    finally:
        storage.close()


def synced_and_story(syncd: Syncd) -> int:
    """``[harvest]`` on, a first sync, then the day's story; the events before the story."""
    harvesting(syncd)
    assert syncd("sync").code == 0
    baseline = len(syncd.json("events"))
    story(syncd.arxiv)
    return baseline


def failed_cleanly(syncd: Syncd, *args: str, reason: str) -> HarvestState:
    """``syncd harvest ARGS`` exits 1 naming ``reason``, no traceback; the state it left."""
    outcome = syncd("harvest", *args)
    assert outcome.code == 1, outcome.out + outcome.err[-2000:]
    assert reason in outcome.err
    assert "Traceback" not in outcome.err
    state = harvest_state(syncd)
    assert state.failing and state.last_error is not None and reason in state.last_error
    return state


class TestPoisonedFrom:
    """Item 1: a responseDate is a UTC time before it becomes the next ``from``."""

    @pytest.mark.parametrize("said", ["yesterday", STAMP + "+" + "9" * 40])
    def test_a_response_date_that_is_no_time_stores_nothing(self, syncd: Syncd, said: str) -> None:
        """A page whose responseDate is not a time (or longer than the column) is refused:
        nothing applied, ``from`` untouched, the failure recorded; the next harvest runs."""
        baseline = synced_and_story(syncd)
        syncd.arxiv.inject(answers(oai_page(syncd.arxiv, [NESTPIPE], response_date=said)))
        state = failed_cleanly(syncd, "--from", DAY.isoformat(), reason="responseDate")
        assert state.from_date == DAY and not state.in_progress  # as --from left it
        assert told(syncd, baseline) == []
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
        assert harvest_state(syncd).from_date == DAY

    def test_a_server_clock_ahead_does_not_skip_changes(self, syncd: Syncd) -> None:
        """A responseDate in 2099 makes the next ``from`` no later than this machine's today."""
        synced_and_story(syncd)
        future = oai_page(syncd.arxiv, [NESTPIPE], response_date="2099-01-01T00:00:00Z")
        syncd.arxiv.inject(answers(future))
        assert syncd("harvest", "--from", DAY.isoformat()).code == 0
        stored = harvest_state(syncd).from_date
        assert stored is not None and DAY <= stored <= datetime.now(UTC).date()

    def test_a_poisoned_row_of_an_older_syncd_is_read_as_unknown(self, syncd: Syncd) -> None:
        """A ``from`` and a start that an older syncd stored unchecked read as unknown: the
        pages answer, and the next harvest starts over and stores a real date."""
        synced_and_story(syncd)
        syncd.sections += "enabled = true\n"
        assert syncd("harvest", "--from", DAY.isoformat()).code == 0
        engine = sa.create_engine(syncd.database_url)
        try:
            with engine.begin() as conn:
                conn.execute(
                    harvest_state_table.update().values(
                        from_date="yesterday",
                        started_response_date="not a time",
                        last_response_date="x" * 40,
                        token="stale",
                    )
                )
        finally:
            engine.dispose()
        state = harvest_state(syncd)
        assert (state.from_date, state.in_progress, state.token) == (None, False, None)
        with serving(syncd) as site:
            for path in ("/", "/authors", "/events"):
                assert site.get(path).status_code == 200, path
        assert syncd("harvest").code == 0
        assert isinstance(harvest_state(syncd).from_date, date)


class TestTokensThatNeverEnd:
    """Item 2: a harvest ends whatever tokens the server sends, and says why."""

    @staticmethod
    def _first(params: Any) -> bool:
        return is_oai(params) and "resumptionToken" not in params

    @staticmethod
    def _token_is(token: str) -> Callable[[Any], bool]:
        return lambda params: params.get("resumptionToken") == token

    def _serve(self, syncd: Syncd, chain: dict[str | None, tuple[list[RawPaper], str]]) -> None:
        """Answer the first page (``None``) and each token with its records and next token."""
        for asked, (records, following) in chain.items():
            page = list_records_xml(records, token=following, response_date=STAMP)
            when = self._first if asked is None else self._token_is(asked)
            syncd.arxiv.inject(answers(page, when=when, times=50))

    @pytest.mark.parametrize(
        ("chain", "requests"),
        [
            (
                {None: (STRANGERS[:1], "A"), "A": (STRANGERS[1:2], "B"), "B": (STRANGERS[2:], "A")},
                3,
            ),
            ({None: (STRANGERS[:1], "A"), "A": (STRANGERS[1:2], "A")}, 2),
        ],
        ids=["A-B-A", "one-page-forever"],
    )
    def test_a_token_sent_again_stops_the_harvest(
        self, syncd: Syncd, chain: dict[str | None, tuple[list[RawPaper], str]], requests: int
    ) -> None:
        """Tokens that loop stop the harvest at the first token seen again in its set."""
        synced_and_story(syncd)
        self._serve(syncd, chain)
        syncd.arxiv.reset_log()
        failed_cleanly(syncd, "--from", DAY.isoformat(), reason="its list loops")
        assert len([r for r in syncd.arxiv.requests if r.path == "/oai"]) == requests

    def test_the_same_records_under_new_tokens_stop_the_harvest(self, syncd: Syncd) -> None:
        """A page that lists again what a page before it listed, under a fresh token, stops it."""
        synced_and_story(syncd)
        self._serve(syncd, {None: (STRANGERS, "T1"), "T1": (STRANGERS, "T2")})
        syncd.arxiv.reset_log()
        state = failed_cleanly(syncd, "--from", DAY.isoformat(), reason="same 3 records")
        assert len([r for r in syncd.arxiv.requests if r.path == "/oai"]) == 2
        assert state.in_progress and state.pages == 1  # the first page stays applied

    def test_a_run_stops_after_its_pages_and_the_next_resumes(self, syncd: Syncd) -> None:
        """Past ``max_pages`` (``MAX_PAGES`` in production) a run stops with a recorded
        failure; a plain harvest then resumes and tells the day as an uninterrupted one."""
        syncd.arxiv.oai.page_size = 1
        baseline = synced_and_story(syncd)
        app = App.open(load_settings(syncd.config))
        try:
            with (
                app.arxiv_client() as client,
                pytest.raises(PermanentUpstreamError, match="stopped after 2 pages in one run"),
            ):
                harvest(app.storage, client, app.settings, since=DAY, max_pages=2)
            state = app.storage.harvests.state()
            assert state.in_progress and state.pages == 2
            assert state.last_error is not None and "2 pages in one run" in state.last_error
        finally:
            app.close()
        assert len(told(syncd, baseline)) < 8
        outcome = syncd("harvest")
        assert outcome.code == 0, outcome.err
        events = told(syncd, baseline)
        # The day's 7 changes, and the namesake's paper held for review.
        assert len(events) == len(set(events)) == 8
        assert {e[1] for e in events} >= {NESTPIPE, NEW_PAPER}


class TestTokens:
    """Item 4: a token longer than arXiv's is never stored, nor sent."""

    def test_a_huge_token_refuses_its_page(self, syncd: Syncd) -> None:
        """A page whose token is 1 MiB applies nothing and stores no token."""
        baseline = synced_and_story(syncd)
        page = oai_page(syncd.arxiv, [NESTPIPE], token="t" * (1024 * 1024))
        syncd.arxiv.inject(answers(page))
        state = failed_cleanly(syncd, "--from", DAY.isoformat(), reason="1048576 characters")
        assert state.token is None and told(syncd, baseline) == []

    def test_a_huge_stored_token_restarts_its_set(self, syncd: Syncd) -> None:
        """A 1 MiB token an older syncd stored is not sent: the set is listed again from
        ``from``, and the harvest completes."""
        baseline = synced_and_story(syncd)
        storage = Storage(syncd.database_url)
        try:
            storage.harvests.start_from(DAY)
        finally:
            storage.close()
        engine = sa.create_engine(syncd.database_url)
        try:
            with engine.begin() as conn:
                conn.execute(
                    harvest_state_table.update().values(
                        started_response_date=STAMP, set_index=0, token="t" * (1024 * 1024)
                    )
                )
        finally:
            engine.dispose()
        syncd.arxiv.reset_log()
        outcome = syncd("harvest")
        assert outcome.code == 0, outcome.err
        sent = [r.params.get("resumptionToken", "") for r in syncd.arxiv.requests]
        assert max(map(len, sent)) < 100
        assert {e[1] for e in told(syncd, baseline)} >= {NESTPIPE, NEW_PAPER}


def _bad_record(arxiv_id: str, old: bytes, new: bytes) -> bytes:
    return record_xml(RawPaper(arxiv_id, authors="Grace Hopper")).encode().replace(old, new, 1)


BAD_RECORDS = {
    "an id outside arXiv's scheme": _bad_record(
        "2607.19999", b"oai:arXiv.org:2607.19999", b"oai:arXiv.org:not/an-id"
    ),
    "nesting past the depth limit": _bad_record(
        "2607.19999", b"An abstract.", b"<b>" * 300 + b"</b>" * 300
    ),
    "bytes that are not UTF-8": _bad_record("2607.19999", b"An abstract.", b"caf\xe9"),
}


class TestOneBadRecord:
    """Item 5: a record nobody here follows, however bad, never stops the page beside it."""

    @pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
    def test_a_bad_record_nobody_follows_is_skipped(self, syncd: Syncd, kind: str) -> None:
        """The followed record on the same page is applied; the bad one is logged."""
        baseline = synced_and_story(syncd)
        page = oai_page(syncd.arxiv, [LORA, NESTPIPE], before=BAD_RECORDS[kind])
        syncd.arxiv.inject(answers(page))
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
        assert {e[1] for e in told(syncd, baseline)} >= {LORA, NESTPIPE}
        assert "harvest_records_unreadable" in outcome.err
        assert "1 unreadable and nobody's, skipped" in outcome.out

    def test_a_bad_record_someone_follows_stops_the_page(self, syncd: Syncd) -> None:
        """A followed record that cannot be read stops its page, whole: nothing is applied
        from a page that loses one of ours, and the failure says which record."""
        baseline = synced_and_story(syncd)

        def break_nestpipe(body: bytes) -> bytes:
            start = body.index(f"<id>{NESTPIPE}</id>".encode())
            end = body.index(b"</abstract>", start)
            return body[:end] + b"\xff" + body[end:]

        page = oai_page(syncd.arxiv, [LORA, NESTPIPE], mutate=break_nestpipe)
        syncd.arxiv.inject(answers(page))
        failed_cleanly(syncd, "--from", DAY.isoformat(), reason=f"({NESTPIPE}) holds bytes")
        assert told(syncd, baseline) == []


def _in_nestpipe(pattern: bytes, spoilt: bytes) -> Callable[[bytes], bytes]:
    """A ``mutate`` that replaces the first match of ``pattern`` in NestPipe's record."""

    def spoil(body: bytes) -> bytes:
        at = body.index(f"<id>{NESTPIPE}</id>".encode())
        return body[:at] + re.sub(pattern, spoilt, body[at:], count=1)

    return spoil


class TestCrashesPastTheFailurePath:
    """Item 6: what a followed record holds is parsed strictly; a failure, never a crash."""

    @pytest.mark.parametrize(
        ("pattern", "spoilt", "reason"),
        [
            (rb'version="v1"', 'version="v²"'.encode(), "labelled 'v²'"),
            (rb"<date>[^<]*</date>", b"<date>Fri, 31 Dec 9999 23:59:59 -2359</date>", "<date>"),
        ],
        ids=["superscript version", "date past UTC"],
    )
    def test_a_malformed_followed_record_is_a_recorded_failure(
        self, syncd: Syncd, pattern: bytes, spoilt: bytes, reason: str
    ) -> None:
        """``v²`` and ``Fri, 31 Dec 9999 23:59:59 -2359`` in a followed record: exit 1, the
        reason recorded, nothing applied."""
        baseline = synced_and_story(syncd)
        page = oai_page(syncd.arxiv, [NESTPIPE], mutate=_in_nestpipe(pattern, spoilt))
        syncd.arxiv.inject(answers(page))
        failed_cleanly(syncd, "--from", DAY.isoformat(), reason=reason)
        assert told(syncd, baseline) == []

    def test_a_size_in_other_digits_is_an_unknown_size(self, syncd: Syncd) -> None:
        """``²kb`` is a size arXiv does not write: unknown, and the record is applied."""
        baseline = synced_and_story(syncd)

        spoil = _in_nestpipe(rb"<size>[0-9]+kb</size>", "<size>²kb</size>".encode())
        syncd.arxiv.inject(answers(oai_page(syncd.arxiv, [NESTPIPE], mutate=spoil)))
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 0, outcome.err
        assert NESTPIPE in {e[1] for e in told(syncd, baseline)}


class TestUnboundedText:
    """Item 7: an OAI error's message is a line, stored and logged."""

    @pytest.mark.parametrize("code", ["badArgument", "badVerb"])
    def test_a_5_mb_error_message_is_cut(self, syncd: Syncd, code: str) -> None:
        """A 5 MB message is stored and logged in at most a few hundred characters."""
        synced_and_story(syncd)
        syncd.arxiv.inject(answers(error_xml(code, "spam " * (1024 * 1024), response_date=STAMP)))
        outcome = syncd("harvest", "--from", DAY.isoformat())
        assert outcome.code == 1
        assert "spam spam" in outcome.err and len(outcome.err) < 20_000
        state = harvest_state(syncd)
        assert state.last_error is not None and len(state.last_error) < 400


def test_an_unexpected_error_is_recorded_too(syncd: Syncd, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug past every check still leaves its trace in ``last_error`` for the status strip."""
    synced_and_story(syncd)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("syncd.service.harvest._plan_page", broken)
    with pytest.raises(ZeroDivisionError):
        syncd("harvest", "--from", DAY.isoformat())
    state = harvest_state(syncd)
    assert state.last_error == "unexpected ZeroDivisionError: a bug"
    assert state.claimed_at is None
