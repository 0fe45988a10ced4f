"""The errors syncd raises, as one tree.

    SyncdError
    ├── ConfigError            bad configuration: exit code 2
    │   └── BlockedDestinationError  a webhook URL the destination policy refuses
    │                                (syncd.domain.destinations)
    ├── SeedError              a seed file that cannot be read or parsed
    ├── NotFoundError          a paper or event the user named does not exist: exit code 2
    ├── ConflictError          a change the current state refuses: exit code 2, HTTP 409
    ├── Interrupted            shutdown asked a running cycle to stop
    ├── UpstreamError          arXiv (or Crossref, OpenAlex) could not be trusted this time
    │   ├── RetryableUpstreamError   network trouble, 429, 5xx: worth another try
    │   │   └── RateLimited          429/503 with the wait the server asked for
    │   │       └── Throttled            a host throttles us: it cools down until a time
    │   └── PermanentUpstreamError   4xx, error feeds, bad or untrustworthy feeds
    │       ├── RequestRefused       a 4xx that is not the service's own error answer
    │       ├── PublicationSourceError  Crossref's or OpenAlex's body is not what it sends
    │       ├── UnknownAuthorId      an author feed's id that arXiv knows no author by
    │       ├── FeedError            the body is not a trustworthy arXiv Atom feed
    │       ├── ApiError             arXiv answered with its error feed
    │       └── OaiError             OAI-PMH answered with an <error code="...">
    │           ├── BadArgument          an argument it refuses (an unknown set)
    │           ├── BadResumptionToken   the token expired (daily) or is unknown
    │           └── NoRecordsMatch       nothing changed since ``from``: not a failure
    └── StoreError             the database refused or is unreachable
        └── StalePlan            another writer changed the author's papers since they were read

Every message names what was wrong and, where it helps, what to do about it.
"""

from __future__ import annotations

from datetime import datetime

__all__ = [
    "ApiError",
    "BadArgument",
    "BadResumptionToken",
    "ConfigError",
    "ConflictError",
    "FeedError",
    "Interrupted",
    "NoRecordsMatch",
    "NotFoundError",
    "OaiError",
    "PermanentUpstreamError",
    "PublicationSourceError",
    "RateLimited",
    "RequestRefused",
    "RetryableUpstreamError",
    "SeedError",
    "StalePlan",
    "StoreError",
    "SyncdError",
    "Throttled",
    "UnknownAuthorId",
    "UpstreamError",
]


class SyncdError(Exception):
    """Base of every error syncd raises on purpose."""


class ConfigError(SyncdError):
    """The configuration is missing, unreadable or invalid."""


class SeedError(SyncdError):
    """A seed file cannot be read or parsed; the message names the file and line."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class NotFoundError(SyncdError):
    """A paper or event named on the command line does not exist."""


class ConflictError(SyncdError):
    """A change the current state refuses (a configured author is changed in the file)."""


class Interrupted(SyncdError):
    """The process is shutting down; the cycle stops and stores nothing."""


class UpstreamError(SyncdError):
    """arXiv's answer could not be used; the cycle fails and stores nothing."""


class RetryableUpstreamError(UpstreamError):
    """A failure that may pass: timeouts, connection errors, 429 and 5xx."""


class RateLimited(RetryableUpstreamError):
    """The server asked us to wait (429, or 503 with Retry-After)."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Throttled(RateLimited):
    """arXiv throttles us: no request to ``host`` starts before ``next_try_at``.

    Raised instead of waiting longer than the client waits (``backoff_max``),
    or when every attempt was throttled.  What stops on it stored what it had
    (a harvest its pages, a backfill its versions), or nothing (a cycle), and
    resumes once the cooldown ends.
    """

    def __init__(
        self, message: str, retry_after: float | None, host: str, next_try_at: datetime | None
    ) -> None:
        super().__init__(message, retry_after)
        self.host = host
        self.next_try_at = next_try_at


class PermanentUpstreamError(UpstreamError):
    """A failure that another try will not fix: 4xx, error feeds, untrustworthy bodies."""


class RequestRefused(PermanentUpstreamError):
    """The service refused the request (a 4xx other than 429); ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class UnknownAuthorId(PermanentUpstreamError):
    """arXiv knows no author by the ORCID iD or arXiv author id whose feed was asked for.

    The author's data, not an outage: another try answers the same until the
    iD is linked to an arXiv account, or the id is corrected.
    """

    def __init__(self, feed_id: str) -> None:
        super().__init__(f"arXiv knows no author {feed_id}")
        self.feed_id = feed_id


class PublicationSourceError(PermanentUpstreamError):
    """A Crossref or OpenAlex answer is not what the service sends: not JSON, too big,
    or not shaped as its works are; nothing of it is used."""


class FeedError(PermanentUpstreamError):
    """The body is not a complete, well-formed, trustworthy arXiv Atom feed."""


class ApiError(PermanentUpstreamError):
    """arXiv answered with its error feed; the message is arXiv's own."""


class OaiError(PermanentUpstreamError):
    """arXiv's OAI-PMH interface answered with an error; ``code`` is the protocol's."""

    code = "unknown"

    def __init__(self, message: str) -> None:
        super().__init__(f"OAI-PMH {self.code}: {message}")
        self.detail = message


class BadArgument(OaiError):
    """The request had an argument OAI-PMH refuses, such as a set that does not exist."""

    code = "badArgument"


class BadResumptionToken(OaiError):
    """The resumption token expired (arXiv's expire daily) or was never issued."""

    code = "badResumptionToken"


class NoRecordsMatch(OaiError):
    """No record changed in the range asked for: a complete, empty harvest."""

    code = "noRecordsMatch"

    def __init__(self, message: str, response_date: datetime) -> None:
        super().__init__(message)
        self.response_date = response_date


class StoreError(SyncdError):
    """The database refused an operation or cannot be reached."""


class StalePlan(StoreError):
    """Another apply wrote the author's papers after this plan read them: plan again.

    Nothing of this apply was stored.
    """
