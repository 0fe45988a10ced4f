"""The cooldown of an arXiv host that throttles us (syncd.domain.throttle): pure arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from syncd.domain.throttle import (
    Cooldown,
    CooldownPolicy,
    after_answer,
    after_throttle,
    describe,
    wait_before_start,
)

POLICY = CooldownPolicy(first=60.0, cap=3600.0)
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOST = "export.arxiv.org"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def throttled(
    state: Cooldown, seconds: float, *, sent: float | None = None, retry_after: float | None = None
) -> Cooldown:
    """``state`` after a throttle answered at T0 + ``seconds`` to a request sent just before."""
    sent_at = at(seconds - 0.5 if sent is None else sent)
    return after_throttle(state, POLICY, sent_at=sent_at, now=at(seconds), retry_after=retry_after)


def answered(state: Cooldown, seconds: float, *, sent: float | None = None) -> Cooldown:
    sent_at = at(seconds - 0.5 if sent is None else sent)
    return after_answer(state, POLICY, sent_at=sent_at, now=at(seconds))


class TestAfterThrottle:
    """A throttle starts or grows the step, and nothing starts before it ends."""

    @pytest.mark.parametrize(
        ("step", "retry_after", "expected_step", "expected_wait"),
        [
            pytest.param(0.0, None, 60.0, 60.0, id="first-throttle-starts-the-first-step"),
            pytest.param(60.0, None, 120.0, 120.0, id="a-throttle-in-a-storm-doubles-it"),
            pytest.param(2400.0, None, 3600.0, 3600.0, id="never-past-the-cap"),
            pytest.param(3600.0, None, 3600.0, 3600.0, id="at-the-cap-it-stays"),
            pytest.param(0.0, 300.0, 60.0, 300.0, id="a-longer-retry-after-is-waited"),
            pytest.param(240.0, 30.0, 480.0, 480.0, id="a-shorter-retry-after-changes-nothing"),
            pytest.param(0.0, 86400.0, 60.0, 3600.0, id="retry-after-is-capped"),
            pytest.param(30.0, None, 60.0, 60.0, id="never-below-the-first-step"),
        ],
    )
    def test_step_and_wait(
        self, step: float, retry_after: float | None, expected_step: float, expected_wait: float
    ) -> None:
        """The step after a throttle, and how long from the throttle nothing may start."""
        before = Cooldown(step, at(0), at(0), 1) if step else Cooldown()
        after = throttled(before, 100.0, retry_after=retry_after)
        assert after.step == expected_step
        assert after.not_before == at(100.0 + expected_wait)
        assert after.throttled_at == at(100.0)
        assert after.throttles == before.throttles + 1

    def test_a_storm_grows_the_step_to_the_cap(self) -> None:
        """Throttle after throttle, each answered as its cooldown ends: 60, 120, ... 3600."""
        state, moment, steps = Cooldown(), 0.0, []
        for _ in range(9):
            state = throttled(state, moment)
            steps.append(state.step)
            moment += state.step
        assert steps == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
        assert state.throttles == 9

    def test_a_request_sent_before_the_throttle_was_noted_grows_nothing(self) -> None:
        """Another replica's request already on its way when the storm was noted counts once."""
        first = throttled(Cooldown(), 10.0)
        second = throttled(first, 11.0, sent=9.8)
        assert (second.step, second.throttles, second.throttled_at) == (60.0, 1, at(10.0))
        assert second.not_before == first.not_before

    def test_a_request_in_flight_still_extends_to_its_retry_after(self) -> None:
        """What the server told that request to wait is honoured, but grows no step."""
        first = throttled(Cooldown(), 10.0)
        second = throttled(first, 11.0, sent=9.8, retry_after=600.0)
        assert second.step == 60.0
        assert second.not_before == at(611.0)

    def test_a_throttle_during_recovery_doubles_what_is_left(self) -> None:
        """After answers halved the step, a new throttle grows it from there, not from zero."""
        state = Cooldown(step=240.0, not_before=at(0), throttled_at=at(-1000), throttles=0)
        assert throttled(state, 100.0).step == 480.0


class TestAfterAnswer:
    """Answers that are no throttle let the step decay slowly back to nothing."""

    @pytest.mark.parametrize(
        ("step", "expected_step"),
        [
            pytest.param(3600.0, 1800.0, id="halved"),
            pytest.param(120.0, 60.0, id="down-to-the-first-step"),
            pytest.param(60.0, 0.0, id="below-the-first-step-it-is-gone"),
            pytest.param(0.0, 0.0, id="nothing-to-decay"),
        ],
    )
    def test_step_decays(self, step: float, expected_step: float) -> None:
        """An answer halves the step and spaces the next start by it."""
        state = Cooldown(step, at(0), at(0), 3) if step else Cooldown()
        after = answered(state, 100.0)
        assert after.step == expected_step
        assert after.throttles == 0
        assert after.not_before == (at(100.0 + expected_step) if expected_step else None)

    def test_recovery_from_the_cap_takes_six_answers(self) -> None:
        """1800, 900, 450, 225, 112.5, then below a minute: full pace after six answers."""
        state, moment, steps = Cooldown(3600.0, at(0), at(0), 7), 3600.0, []
        while state.slowed:
            state = answered(state, moment)
            steps.append(state.step)
            moment += state.step
        assert steps == [1800, 900, 450, 225, 112.5, 0]
        assert wait_before_start(state, at(moment)) == 0.0

    def test_an_answer_sent_before_the_throttle_is_no_recovery(self) -> None:
        """A 200 to a request already on its way when the throttle was noted changes nothing."""
        state = throttled(Cooldown(), 10.0)
        assert answered(state, 10.5, sent=9.9) == state

    def test_nothing_to_decay_is_left_alone(self) -> None:
        """A host never throttled stays as it is: storage need not write anything."""
        assert answered(Cooldown(), 10.0) == Cooldown()


class TestWaitBeforeStart:
    """What a client waits before its next request to the host."""

    @pytest.mark.parametrize(
        ("not_before", "now", "wait"),
        [
            pytest.param(None, 0.0, 0.0, id="never-throttled"),
            pytest.param(100.0, 40.0, 60.0, id="cooling"),
            pytest.param(100.0, 100.0, 0.0, id="ends-now"),
            pytest.param(100.0, 250.0, 0.0, id="ended"),
        ],
    )
    def test_wait(self, not_before: float | None, now: float, wait: float) -> None:
        """The seconds left until ``not_before``, never negative."""
        state = Cooldown(60.0, at(not_before) if not_before is not None else None)
        assert wait_before_start(state, at(now)) == wait


class TestDescribe:
    """One sentence for the status strip, /readyz and errors."""

    def test_throttling(self) -> None:
        """While throttled: the host, how many throttles in a row, the next try."""
        state = throttled(throttled(Cooldown(), 0.0), 60.0)
        assert describe(HOST, state) == (
            "arXiv is throttling us (export.arxiv.org: 2 throttled answers in a row),"
            " next try at 2026-12-01 12:03:00 UTC"
        )

    def test_recovering(self) -> None:
        """After an answer, the pace it keeps until the step is gone."""
        state = answered(Cooldown(240.0, at(0), at(0), 3), 240.0)
        assert describe(HOST, state) == (
            "arXiv throttled us lately (export.arxiv.org): one request per 120 s until it"
            " recovers, next at 2026-12-01 12:06:00 UTC"
        )

    def test_all_well(self) -> None:
        """Nothing to say of a host that does not throttle us."""
        assert describe(HOST, Cooldown()) is None
