"""The configuration's top-level tables, validated once into ``Settings``.

Environment variables named ``SYNCD_<SECTION>_<KEY>`` (``SYNCD_DATABASE_URL``,
``SYNCD_ARXIV_API_URL``, ...) override the file.  The ``[[webhooks]]`` and
``[[notify]]`` tables are ``targets``'; reading the file is ``loading``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

import sqlalchemy as sa
from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from syncd import __version__
from syncd.config.groups import GroupSettings, distinct_groups
from syncd.config.publications import PublicationsSettings
from syncd.config.reporting import ENV_PREFIX
from syncd.config.sections import DAY, HOUR, WEEK, Section
from syncd.config.targets import NotifySettings, WebhookSettings
from syncd.domain.author_names import check_name, check_query, repeated_names
from syncd.domain.authors import Author
from syncd.domain.destinations import (
    BlockedDestinationError,
    DestinationPolicy,
    check_destination,
    check_host,
)
from syncd.domain.identifiers import check_arxiv_author_id, check_orcid
from syncd.domain.record import split_arxiv_id
from syncd.domain.retries import DEFAULT_RETRY_SCHEDULE
from syncd.domain.vocabulary import AuthorOrigin
from syncd.errors import ConfigError

__all__ = [
    "ArxivSettings",
    "AuthorSettings",
    "DatabaseSettings",
    "DeliverySettings",
    "HarvestSettings",
    "HttpSettings",
    "LogSettings",
    "ScheduleSettings",
    "Settings",
    "SyncSettings",
]

DEFAULT_USER_AGENT = f"syncd/{__version__} (arXiv change tracker; +https://pypi.org/project/syncd/)"


class ArxivSettings(Section):
    """How to talk to the arXiv API, politely (one request every 3 s, one connection)."""

    api_url: str = "https://export.arxiv.org/api/query"
    request_interval: float = Field(3.0, ge=0, le=HOUR)
    page_size: int = Field(100, ge=1, le=2000)
    timeout: float = Field(30.0, gt=0, le=DAY)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base: float = Field(2.0, ge=0, le=HOUR)
    backoff_max: float = Field(300.0, ge=0, le=DAY)
    max_response_bytes: int = Field(64 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    user_agent: str = DEFAULT_USER_AGENT
    contact: str | None = None
    # An author's own feed of claimed papers is <author_feed_url><id>.atom, read
    # at most once per author_feed_interval seconds: claims change rarely.
    author_feed_url: str = "https://arxiv.org/a/"
    author_feed_interval: float = Field(86400.0, ge=0, le=WEEK)
    # The newest results a cycle reads of an author's query and feed each; the rest: unread.
    max_results_per_author: int = Field(10_000, ge=1, le=1_000_000)
    # A throttle's first cooldown step, and the longest one (syncd.domain.throttle).
    throttle_cooldown: float = Field(60.0, gt=0, le=DAY)
    throttle_cooldown_max: float = Field(3600.0, gt=0, le=DAY)

    @field_validator("api_url", "author_feed_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return check_http_url(value)


def check_http_url(value: str) -> str:
    """``value`` if it is an http:// or https:// URL; else ``ValueError``."""
    if not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return value


class DatabaseSettings(Section):
    """Where the record lives: SQLite (embedded default) or PostgreSQL."""

    url: str = "sqlite:///data/syncd.sqlite3"
    # Run `syncd db upgrade` automatically at start; turn off to migrate by hand.
    migrate: bool = True
    # The key of the URL hashes the database keeps of unsigned targets (chat
    # formats, [[notify]]), made (0600) if missing.  Default: beside a SQLite
    # file; on PostgreSQL a file every replica reads (a mounted secret).
    key_file: Path | None = None

    @field_validator("url")
    @classmethod
    def _supported(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("cannot contain a NUL character")
        scheme = value.split(":", 1)[0].split("+", 1)[0]
        if scheme not in {"sqlite", "postgresql", "postgres"}:
            raise ValueError("must be a sqlite:/// or postgresql:// URL")
        _check_database_url(value)
        # SQLAlchemy would pick psycopg2 for a bare postgresql:// URL; we ship psycopg 3.
        if value.startswith(("postgresql://", "postgres://")):
            return "postgresql+psycopg://" + value.split("://", 1)[1]
        return value

    @field_validator("key_file")
    @classmethod
    def _no_nul_in_key_file(cls, value: Path | None) -> Path | None:
        if value is not None and "\x00" in str(value):
            raise ValueError("a path cannot contain a NUL character")
        return value

    @property
    def key_path(self) -> Path | None:
        """``key_file``, else ``<database>.key`` beside a SQLite file; None on PostgreSQL."""
        if self.key_file is not None:
            return self.key_file
        database = sa.engine.make_url(self.url).database
        if not self.url.startswith("sqlite") or not database:
            return None
        return Path(f"{database}.key")


def _check_database_url(value: str) -> None:
    """Refuse, at load, a URL SQLAlchemy cannot parse and an in-memory SQLite database.

    The messages never repeat the URL: it may hold a password.
    """
    try:
        url = sa.engine.make_url(value)
    except (sa.exc.ArgumentError, ValueError):
        # e.g. a port that is not a number: make_url calls int() on it.
        raise ValueError("not a URL SQLAlchemy can parse; check the host and port") from None
    if url.port is not None and not 1 <= url.port <= 65535:
        raise ValueError(f"port {url.port} is out of range (1-65535)")
    if url.get_backend_name() == "sqlite" and _in_memory(url):
        # Each connection would get its own empty database, and all of it is
        # gone at exit: `syncd sync` would report events and keep none.
        raise ValueError(
            "an in-memory SQLite database keeps nothing; give a file, "
            "e.g. sqlite:///data/syncd.sqlite3"
        )


def _in_memory(url: sa.engine.URL) -> bool:
    database = url.database or ""
    return (
        database in ("", ":memory:")
        or database.startswith("file::memory:")
        or url.query.get("mode") == "memory"
    )


class AuthorSettings(Section):
    """One tracked author: a name, the seed snapshot, and optional overrides (``author()``)."""

    name: Annotated[str, AfterValidator(check_name)]
    seeds: tuple[Path, ...] = ()
    query: Annotated[str, AfterValidator(check_query)] | None = None
    # The author's own arXiv feed (https://arxiv.org/a/<id>.atom): papers they claimed.
    orcid: Annotated[str, AfterValidator(check_orcid)] | None = None
    arxiv_author_id: Annotated[str, AfterValidator(check_arxiv_author_id)] | None = None
    include_ids: tuple[str, ...] = ()
    exclude_ids: tuple[str, ...] = ()

    @field_validator("seeds")
    @classmethod
    def _no_nul(cls, seeds: tuple[Path, ...]) -> tuple[Path, ...]:
        if any("\x00" in str(p) for p in seeds):
            raise ValueError("a path cannot contain a NUL character")
        return seeds

    @field_validator("include_ids", "exclude_ids")
    @classmethod
    def _arxiv_ids(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(split_arxiv_id(v)[0] for v in values)

    def author(self, origin: AuthorOrigin = AuthorOrigin.CONFIG) -> Author:
        """The author this table defines, as everything past the configuration knows it."""
        return Author(
            name=self.name,
            origin=origin,
            orcid=self.orcid,
            arxiv_author_id=self.arxiv_author_id,
            query=self.query,
            seeds=self.seeds,
            include_ids=self.include_ids,
            exclude_ids=self.exclude_ids,
        )


class ScheduleSettings(Section):
    """When ``syncd run`` starts a cycle: every ``interval`` seconds, or on a cron line."""

    interval: float = Field(3600.0, ge=1, le=WEEK)
    cron: str | None = None
    jitter: float = Field(60.0, ge=0, le=DAY)

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, value: str | None) -> str | None:
        return None if value is None else check_crontab(value)

    @model_validator(mode="after")
    def _interval_or_cron(self) -> Self:
        if self.cron is not None and "interval" in self.model_fields_set:
            raise ValueError("give 'interval' or 'cron', not both")
        return self


def check_crontab(value: str) -> str:
    """``value`` if it is a crontab line of five fields that fires; else ``ValueError``."""
    if len(value.split()) != 5:
        raise ValueError("must be a crontab line of five fields, e.g. '0 */6 * * *'")
    # APScheduler's own parser, as the daemon will use it: a field out of
    # range ('99 * * * *') would otherwise pass here and crash `syncd run`.
    # Imported here, for a config that has a cron line: every command checks
    # it, and only these need the scheduler.
    from apscheduler.triggers.cron import CronTrigger  # noqa: PLC0415

    try:
        trigger = CronTrigger.from_crontab(value, timezone=UTC)
    except ValueError as exc:
        raise ValueError(f"not a valid crontab line: {exc}") from None
    # '0 0 31 2 *' parses but never fires; the daemon needs a next fire time.
    if trigger.get_next_fire_time(None, datetime.now(UTC)) is None:
        raise ValueError("the crontab line never fires")
    return value


class HarvestSettings(Section):
    """The OAI-PMH harvester: arXiv's nightly changes for many authors at once (off by default).

    arXiv's OAI-PMH interface has each announcement's records "typically
    around 10:30pm ET Sunday through Thursday" (its OAI-PMH notes): 02:30
    or 03:30 UTC.  The default cron harvests at 04:30 UTC, after either.
    """

    enabled: bool = False
    url: str = "https://oaipmh.arxiv.org/oai"
    sets: tuple[str, ...] = ()
    cron: str = "30 4 * * *"
    # How often each author's full API sweep runs when harvesting (a week).
    sweep_interval: float = Field(WEEK, ge=HOUR, le=30 * DAY)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return check_http_url(value)

    @field_validator("cron")
    @classmethod
    def _crontab(cls, value: str) -> str:
        return check_crontab(value)

    @field_validator("sets")
    @classmethod
    def _set_specs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for spec in value:
            parts = spec.split(":")
            if not all(part.replace("-", "").replace(".", "").isalnum() for part in parts):
                raise ValueError(f"{spec[:60]!r} is not a setSpec such as 'physics:hep-th'")
        return value

    @property
    def sweeps(self) -> float | None:
        """Seconds between two sweeps of an author while harvesting; None when not."""
        return self.sweep_interval if self.enabled else None


class HttpSettings(Section):
    """Where /metrics, /healthz, /readyz, the read API, the feeds and the pages are served."""

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # Seconds since the last successful cycle after which /readyz says unready;
    # by default two schedule periods and ten minutes.  At most 30 days: the
    # default for a weekly schedule (two weeks, a day's jitter) fits.
    ready_max_age: float | None = Field(None, gt=0, le=30 * DAY)
    # The bearer token of the operator views (GET /api/v1/webhooks); without
    # one they answer 404.  Better from the environment: SYNCD_HTTP_ADMIN_TOKEN.
    admin_token: SecretStr | None = Field(None, min_length=16, max_length=512)
    # Where people reach these pages (behind a proxy, say): chat messages link
    # a paper's page under it.  Without it they link arXiv only.
    public_url: str | None = None

    @field_validator("public_url")
    @classmethod
    def _public_base(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL naming a host")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError("must be a plain base URL: no query, fragment or credentials")
        return value.rstrip("/")


class DeliverySettings(Section):
    """How the outbox is worked."""

    workers: int = Field(4, ge=1, le=64)
    # seconds a claimed delivery is ours before others retry it
    lease: float = Field(120.0, ge=1, le=DAY)
    poll_interval: float = Field(1.0, gt=0, le=HOUR)
    sync_wait: float = Field(30.0, ge=0, le=DAY)  # seconds `syncd sync` waits for due deliveries
    shutdown_grace: float = Field(20.0, ge=0, le=HOUR)
    # seconds a delivered outbox row is kept; 0 keeps them all (they grow with every event)
    keep_delivered: float = Field(30 * DAY, ge=0, le=3650 * DAY)
    # Seconds before attempt 2, 3, ...: about three days in all, then dead-letter.
    retry_schedule: tuple[Annotated[float, Field(ge=0, le=WEEK)], ...] = Field(
        DEFAULT_RETRY_SCHEDULE, min_length=1
    )
    # Link-local and cloud-metadata destinations (169.254.0.0/16, fe80::/10,
    # fd00:ec2::254) are refused unless listed here: addresses, networks, host names.
    allow_destinations: tuple[str, ...] = ()

    @field_validator("allow_destinations")
    @classmethod
    def _destinations(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        DestinationPolicy.from_allow_list(entries)  # ValueError naming the bad entry
        return entries


class SyncSettings(Section):
    """What counts as a change over time."""

    # complete syncs without a paper before it is reported as paper.removed
    removal_after: int = Field(3, ge=1, le=1000)
    # a name-only author's first sync takes the largest co-author group as theirs
    # only when it holds at least this many times the papers of the next one
    basis_margin: float = Field(2.0, ge=1.0, le=1000.0)


class LogSettings(Section):
    """Log verbosity and format (``auto``: JSON unless writing to a terminal)."""

    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "json", "console"] = "auto"


class Settings(BaseSettings):
    """Everything syncd is configured with."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="forbid",
        frozen=True,
    )

    arxiv: ArxivSettings = ArxivSettings()
    database: DatabaseSettings = DatabaseSettings()
    sync: SyncSettings = SyncSettings()
    log: LogSettings = LogSettings()
    schedule: ScheduleSettings = ScheduleSettings()
    http: HttpSettings = HttpSettings()
    delivery: DeliverySettings = DeliverySettings()
    harvest: HarvestSettings = HarvestSettings()
    publications: PublicationsSettings = PublicationsSettings()
    # None is fine: a lab may add every author at run time (syncd authors add).
    authors: tuple[AuthorSettings, ...] = ()
    groups: Annotated[tuple[GroupSettings, ...], AfterValidator(distinct_groups)] = ()
    webhooks: tuple[WebhookSettings, ...] = ()
    notify: tuple[NotifySettings, ...] = ()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment wins over the file, as operators of containers expect.
        return _EnvironmentSource(settings_cls), init_settings

    @property
    def ready_max_age(self) -> float:
        """Seconds without a successful cycle before the daemon reports unready."""
        if self.http.ready_max_age is not None:
            return self.http.ready_max_age
        period = self.schedule.interval if self.schedule.cron is None else 86400.0
        slack = 2 * period + self.schedule.jitter + 600
        if self.harvest.enabled:
            # Each author is swept once per sweep_interval: with few authors,
            # most cycles sweep none (the harvester has its own check).
            return self.harvest.sweep_interval + slack
        return slack

    @property
    def configured_authors(self) -> tuple[Author, ...]:
        """The ``[[authors]]`` tables as the authors they define, in the file's order."""
        return tuple(table.author() for table in self.authors)

    @field_validator("webhooks")
    @classmethod
    def _distinct_webhooks(cls, hooks: tuple[WebhookSettings, ...]) -> tuple[WebhookSettings, ...]:
        names = [h.display_name for h in hooks]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"webhook name used twice: {', '.join(duplicates)} (set 'name')")
        return hooks

    @model_validator(mode="after")
    def _distinct_targets(self) -> Self:
        """Webhooks, notify tables and their targets share the outbox's one list of names."""
        names = [h.display_name for h in self.webhooks]
        names += [n.name for n in self.notify]
        names += [name for n in self.notify for name, _ in n.targets()]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"name used by two delivery targets: {', '.join(duplicates)}")
        return self

    @field_validator("webhooks", "notify")
    @classmethod
    def _allowed_destinations(
        cls, targets: tuple[WebhookSettings | NotifySettings, ...], info: ValidationInfo
    ) -> tuple[WebhookSettings | NotifySettings, ...]:
        """Refuse, at load, target URLs whose host is a blocked IP literal.

        Host names are checked when sending, against what they resolve to then.
        """
        delivery = info.data.get("delivery")
        if not isinstance(delivery, DeliverySettings):
            return targets  # [delivery] is invalid itself and reported as such
        policy = DestinationPolicy.from_allow_list(delivery.allow_destinations)
        errors = []
        for location, check in _destination_checks(targets):
            try:
                check(policy)
            except BlockedDestinationError as exc:
                # Located at webhooks[N].url or notify[N].urls[M], which a plain
                # ValueError here could not say.
                errors.append(
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "blocked_destination", "{reason}", {"reason": str(exc)}
                        ),
                        loc=location,
                        input="[redacted]",
                    )
                )
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return targets

    @field_validator("authors")
    @classmethod
    def _distinct_authors(cls, authors: tuple[AuthorSettings, ...]) -> tuple[AuthorSettings, ...]:
        """One table per author: names are compared without regard to case."""
        twice = [
            f"authors[{later}] {authors[later].name!r} is authors[{first}] {authors[first].name!r}"
            for later, first in repeated_names([a.name for a in authors])
        ]
        if twice:
            raise ValueError(f"author listed twice without regard to case: {'; '.join(twice)}")
        return authors


class _UndecodableValue(ValueError):
    """A structured value from the environment that is not JSON; ``key`` is its field."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _EnvironmentSource(EnvSettingsSource):
    """``SYNCD_<SECTION>_<KEY>`` variables, whose malformed lists and tables name themselves.

    pydantic-settings reads a list, a table or an array of tables from the
    environment as JSON, and a value that is not JSON escapes it as a bare
    ``SettingsError`` naming only the section: a traceback.
    """

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            raise _UndecodableValue(field_name) from None

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except _UndecodableValue as exc:
            # A ConfigError, not a ValueError, so pydantic-settings does not wrap it.
            key = field_name if exc.key == field_name else f"{field_name}.{exc.key}"
            variable = f"{self.env_prefix}{key.replace('.', '_')}".upper()
            raise ConfigError(
                f"environment variable {variable}: invalid configuration:\n  {key}: not valid"
                " JSON; lists and tables from the environment are written as JSON,"
                ' e.g. [5, 300] or {"workers": 2}'
            ) from None


def _destination_checks(
    targets: Sequence[WebhookSettings | NotifySettings],
) -> Iterator[tuple[tuple[int | str, ...], Callable[[DestinationPolicy], None]]]:
    """Where each target URL is in the file, and its check against a policy (no DNS)."""
    for number, target in enumerate(targets):
        if isinstance(target, WebhookSettings):
            yield (number, "url"), functools.partial(check_destination, target.url)
            continue
        for index, host in enumerate(target.network_hosts()):
            if host is not None:
                yield (number, "urls", index), functools.partial(check_host, host, 0)
