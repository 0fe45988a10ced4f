"""[[notify]] targets through the outbox: Apprise to real loopback servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncd.domain.model import Event
from syncd.render.describe import describe
from syncd.render.notification import BodyFormat, notification
from syncd.storage import Storage
from tests.integration.conftest import Syncd
from tests.recorder import Recorder
from tests.smtpreceiver import SmtpReceiver

PASSWORD = "pa55-Sekrit-0815"
TOKEN = "tok3n-Sekrit-4711"


@pytest.fixture
def working() -> Iterator[Recorder]:
    with Recorder() as running:
        yield running


@pytest.fixture
def failing() -> Iterator[Recorder]:
    with Recorder() as running:
        running.status = 500
        yield running


def _notify(syncd: Syncd, *urls: str, schedule: str = "[0.05, 0.05]", group: str = "event") -> None:
    listed = ", ".join(f'"{url}"' for url in urls)
    syncd.sections = f"""
[delivery]
retry_schedule = {schedule}
sync_wait = 10
poll_interval = 0.05

[[notify]]
name = "lab"
urls = [{listed}]
{f'group = "{group}"' if group else ""}
timeout = 5
"""


def _expected(syncd: Syncd, body_format: BodyFormat = BodyFormat.MARKDOWN) -> list[tuple[str, str]]:
    """(title, body) of each stored event, as the shared renderer makes them."""
    return sorted(
        notification([e], public_url=None, body_format=body_format) for e in _events(syncd)
    )


def _events(syncd: Syncd) -> list[Event]:
    storage = Storage(syncd.database_url)
    try:
        return storage.events.since()
    finally:
        storage.close()


def test_a_cycle_is_one_notification_by_default(
    syncd: Syncd, working: Recorder, failing: Recorder
) -> None:
    """The first sync links seven papers: one digest per target, retried and dead-lettered whole."""
    _notify(
        syncd,
        f"json://127.0.0.1:{working.port}/a",
        f"json://127.0.0.1:{failing.port}/b",
        group="",
    )
    outcome = syncd("sync")
    assert "4 attempts, 0 pending, 1 dead-lettered" in outcome.out
    (digest,) = working.received
    title, body = notification(_events(syncd), public_url=None)
    assert (digest.fields()["title"], digest.fields()["message"]) == (title, body)
    assert len(failing.received) == 3
    listed = {e["name"]: e for e in syncd.json("webhooks", "list")}
    assert (listed["lab#1"]["delivered"], listed["lab#2"]["dead"]) == (1, 1)


def test_one_target_failing_holds_back_nothing_of_the_other(
    syncd: Syncd, working: Recorder, failing: Recorder
) -> None:
    """#1 gets every event once; #2 is tried per schedule, then dead-lettered, and listed so."""
    _notify(
        syncd,
        f"json://127.0.0.1:{working.port}/hook",
        f"form://user:{PASSWORD}@127.0.0.1:{failing.port}/{TOKEN}",
    )
    outcome = syncd("sync")
    assert outcome.code == 0, outcome.err
    assert "28 attempts, 0 pending, 7 dead-lettered" in outcome.out
    received = [(r.fields()["title"], r.fields()["message"]) for r in working.received]
    assert sorted(received) == _expected(syncd)
    assert len(failing.received) == 7 * 3  # the first attempt and the schedule's two retries
    assert {r.path for r in failing.received} == {f"/{TOKEN}"}
    listed = {e["name"]: e for e in syncd.json("webhooks", "list")}
    assert (listed["lab#1"]["delivered"], listed["lab#1"]["dead"]) == (7, 0)
    assert (listed["lab#2"]["delivered"], listed["lab#2"]["dead"]) == (0, 7)
    assert listed["lab#2"]["url"] == "form://…"
    table = syncd("webhooks", "list")
    assert "lab#2" in table.out
    assert "form://…" in table.out
    for text in (outcome.out, outcome.err, table.out, table.err, str(listed)):
        assert PASSWORD not in text
        assert TOKEN not in text


def test_dead_letters_are_redelivered_once_the_target_works(
    syncd: Syncd, working: Recorder, failing: Recorder
) -> None:
    _notify(syncd, f"json://127.0.0.1:{working.port}/a", f"json://127.0.0.1:{failing.port}/b")
    assert "7 dead-lettered" in syncd("sync").out
    failing.status = 200
    assert syncd("webhooks", "redeliver", "--dead").out == "7 deliveries queued\n"
    assert "0 pending, 0 dead-lettered" in syncd("sync").out
    assert len(working.received) == 7
    delivered = [r for r in failing.received if r.status == 200]
    assert sorted((r.fields()["title"], r.fields()["message"]) for r in delivered) == _expected(
        syncd
    )


def test_ntfy_on_a_host_of_its_own(syncd: Syncd, working: Recorder) -> None:
    """ntfy:// naming a host posts to it, the topic in the JSON body."""
    _notify(syncd, f"ntfy://127.0.0.1:{working.port}/arxiv-lab")
    assert syncd("sync").code == 0
    assert len(working.received) == 7
    assert {r.path for r in working.received} == {"/"}
    assert {r.fields()["topic"] for r in working.received} == {"arxiv-lab"}
    received = sorted((r.fields()["title"], r.fields()["message"]) for r in working.received)
    assert received == _expected(syncd, BodyFormat.TEXT)  # ntfy shows text as it is


def test_a_cycle_is_one_mail_in_html_and_plain_text(syncd: Syncd) -> None:
    """mailto:// to a real SMTP server: the first sync's digest is one mail, both parts
    written for mail (the HTML renderer's body, the plain part without Markdown)."""
    with SmtpReceiver() as smtp:
        _notify(syncd, smtp.url(), group="")
        assert syncd("sync").code == 0
        (mail,) = smtp.wait_for(1)
    events = _events(syncd)
    title, html = notification(events, public_url=None, body_format=BodyFormat.HTML)
    assert mail["Subject"] == title
    assert mail.get_content_type() == "multipart/alternative"
    html_part, text_part = mail.get_body(("html",)), mail.get_body(("plain",))
    assert html_part is not None
    assert text_part is not None
    assert html_part.get_content().strip() == html
    text = text_part.get_content()
    assert len(events) > 1
    for event in events:
        assert describe(event, public_url=None).headline in text
    assert "**" not in text
    assert "~~" not in text


def test_webhooks_test_sends_a_mail_target_html_and_text(syncd: Syncd) -> None:
    """`syncd webhooks test` to mailto://: the sample change as a mail of both parts."""
    with SmtpReceiver() as smtp:
        _notify(syncd, smtp.url())
        outcome = syncd("webhooks", "test", "lab#1")
        (mail,) = smtp.wait_for(1)
    assert (outcome.code, outcome.out) == (0, "lab#1: delivered a sample notification\n")
    html_part, text_part = mail.get_body(("html",)), mail.get_body(("plain",))
    assert html_part is not None
    assert text_part is not None
    assert "<ins " in html_part.get_content()
    assert "{+with a revised title+}" in text_part.get_content()
    assert "~~" not in html_part.get_content() + text_part.get_content()


def test_webhooks_test_sends_to_a_notify_target(
    syncd: Syncd, working: Recorder, failing: Recorder
) -> None:
    _notify(
        syncd,
        f"json://127.0.0.1:{working.port}/hook",
        f"json://user:{PASSWORD}@127.0.0.1:{failing.port}/{TOKEN}",
    )
    ok = syncd("webhooks", "test", "lab#1")
    assert (ok.code, ok.out) == (0, "lab#1: delivered a sample notification\n")
    (sample,) = working.received
    assert sample.fields()["title"].startswith("A sample paper: … (2401.00001) v2")
    assert "~~" in sample.fields()["message"]  # the title's word diff, in Markdown
    bad = syncd("webhooks", "test", "lab#2")
    assert bad.code == 1
    assert "lab#2: retry: " in bad.err
    assert "500" in bad.err
    assert PASSWORD not in bad.err + bad.out
    assert TOKEN not in bad.err + bad.out


def test_a_bad_notify_url_is_exit_2_naming_it(syncd: Syncd) -> None:
    _notify(syncd, "json://127.0.0.1/ok", f"nosuchservice://{TOKEN}@host/")
    outcome = syncd("sync")
    assert outcome.code == 2
    assert "notify[0].urls[1]: " in outcome.err
    assert TOKEN not in outcome.err + outcome.out
