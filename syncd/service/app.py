"""The composition root: what every ``syncd`` command is built from, built once.

The CLI loads the configuration, opens an ``App`` and hands it to a command;
the daemon takes the same ``App``.  Nothing else constructs the storage, the
arXiv client or the delivery worker, so the two cannot drift apart.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from datetime import time as dt_time
from typing import TYPE_CHECKING

from syncd.apprise_urls import url_scheme
from syncd.config import DatabaseSettings, Settings
from syncd.delivery.redaction import url_origin
from syncd.domain.model import EndpointSummary
from syncd.domain.routing import Endpoint, EndpointSpec, url_hash
from syncd.domain.signing import signing_key
from syncd.domain.throttle import wait_before_start
from syncd.domain.vocabulary import DeliveryFormat
from syncd.errors import ConfigError
from syncd.service.configured import check_routes, reconcile_config
from syncd.storage import Storage
from syncd.storage.files import url_key

if TYPE_CHECKING:
    from syncd import metrics
    from syncd.delivery.worker import Dispatcher
    from syncd.sources.arxiv import ArxivClient

__all__ = ["App", "endpoints_from", "installation_key"]


def endpoints_from(settings: Settings, unsigned_key: Callable[[], bytes]) -> dict[str, Endpoint]:
    """The configured webhooks and notify targets by name, secrets resolved now (once).

    A signed webhook's URL hash is keyed with its signing secret; an unsigned
    target's (chat formats, Apprise) with ``unsigned_key()``, asked for only
    when there is one.
    """
    endpoints = {}
    for hook in settings.webhooks:
        secrets = tuple(hook.secret_values())
        key = signing_key(secrets[0]) if secrets else unsigned_key()
        spec = EndpointSpec(
            hook.display_name,
            hook.url,
            url_hash(hook.url, key),
            hook.events,
            hook.kinds,
            hook.format,
            hook.grouping,
            hook.authors,
            hook.groups,
        )
        endpoints[spec.name] = Endpoint(spec, secrets, hook.timeout)
    for table in settings.notify:
        for name, url in table.targets():
            spec = EndpointSpec(
                name,
                url,
                url_hash(url, unsigned_key()),
                table.events,
                table.kinds,
                DeliveryFormat.APPRISE,
                table.grouping,
                table.authors,
                table.groups,
            )
            endpoints[name] = Endpoint(spec, (), table.timeout)
    return endpoints


def installation_key(database: DatabaseSettings) -> bytes:
    """This installation's key of unsigned URL hashes: from ``key_file``, made if missing.

    Never in the database, so that a copy of it cannot confirm a guessed URL.
    """
    path = database.key_path
    if path is None:
        raise ConfigError(
            "database.key_file: chat and [[notify]] targets on PostgreSQL need a key file"
            " every replica reads (a mounted secret; made if missing), or"
            " SYNCD_DATABASE_KEY_FILE"
        )
    return url_key(path)


@dataclass(frozen=True, slots=True)
class App:
    """The settings, the storage and the configured endpoints of one process."""

    settings: Settings
    storage: Storage
    endpoints: Mapping[str, Endpoint]

    @classmethod
    def open(cls, settings: Settings) -> App:
        """Open the database and resolve the endpoints; nothing is written yet."""
        unsigned_key = functools.cache(functools.partial(installation_key, settings.database))
        endpoints = endpoints_from(settings, unsigned_key)
        return cls(settings, Storage(settings.database.url), endpoints)

    def close(self) -> None:
        """Release the database's connections."""
        self.storage.close()

    def followed_names(self) -> list[str]:
        """The authors followed now: the file's, in its order, then those added at run time."""
        configured = [a.name for a in self.settings.configured_authors]
        added = [f.definition.name for f in self.storage.authors.followed()]
        return configured + sorted(set(added) - set(configured))

    def register_endpoints(self) -> None:
        """Make the outbox's endpoint table match the configuration (commands that deliver),
        once the file's authors and groups are the database's and its targets' routes name
        known ones (a ``ConfigError`` if not)."""
        reconcile_config(self.storage, self.settings)
        check_routes(self.storage, self.settings)
        self.storage.endpoints.register([e.spec for e in self.endpoints.values()])

    def arxiv_client(self, sleep: Callable[[float], None] = time.sleep) -> ArxivClient:
        """A client of the configured arXiv API; ``sleep`` lets shutdown cut its waits short.

        On PostgreSQL it paces through the database, so every replica's
        requests (cycles and backfills alike) share one politeness budget.
        The cooldowns of hosts that throttle us are the database's on both
        databases: every process on it waits them out, and they outlive it.
        """
        # The client, the worker and the metrics are imported by the commands that
        # use them: `syncd papers` starts without lxml, the senders and Prometheus.
        from syncd.sources.arxiv import ArxivClient  # noqa: PLC0415

        return ArxivClient(
            self.settings.arxiv,
            sleep=sleep,
            pacer=self.storage.pacer,
            cooldowns=self.storage.cooldowns,
        )

    def dispatcher(self) -> Dispatcher:
        """A worker for the configured endpoints' deliveries."""
        from syncd.delivery.worker import Dispatcher  # noqa: PLC0415

        return Dispatcher(
            self.storage.outbox,
            self.endpoints,
            self.settings.delivery,
            public_url=self.settings.http.public_url,
        )

    def drain(self) -> str:
        """Deliver what is due now (waiting up to ``[delivery] sync_wait``); say how it went."""
        with self.dispatcher() as dispatcher:
            attempted = dispatcher.drain(self.settings.delivery.sync_wait)
        pending, dead = self.storage.outbox.counts()
        return f"webhooks: {attempted} attempts, {pending} pending, {dead} dead-lettered"

    def store_snapshot(self) -> metrics.StoreSnapshot:
        """What the database-backed gauges show, read now."""
        from syncd import metrics  # noqa: PLC0415

        pending, dead = self.storage.outbox.counts()
        set_aside = self.storage.versions.set_aside_count()
        harvest = self.storage.harvests.state()
        now = datetime.now(UTC)
        cooldowns = {
            host: wait_before_start(state, now)
            for host, state in self.storage.cooldowns.all().items()
        }
        return metrics.StoreSnapshot(
            self.storage.papers.counts(),
            pending,
            dead,
            set_aside,
            harvest_from=(
                datetime.combine(harvest.from_date, dt_time(), UTC).timestamp()
                if harvest.from_date
                else None
            ),
            last_harvest=harvest.last_success_at.timestamp() if harvest.last_success_at else None,
            cooldowns=cooldowns,
            publications=(
                self.storage.publications.standing() if self.settings.publications.enabled else {}
            ),
        )

    def endpoint_summaries(self) -> list[EndpointSummary]:
        """The outbox's endpoints, and configured ones it has not seen yet (read-only)."""
        known = self.storage.endpoints.summaries()
        names = {e.name for e in known}
        fresh = [
            EndpointSummary(e.name, True, None, None, 0, 0, 0)
            for e in self.endpoints.values()
            if e.name not in names
        ]
        return sorted([*known, *fresh], key=lambda e: e.name)

    def endpoint_origin(self, name: str) -> str:
        """Where an endpoint points, down to its host: chat services put tokens in paths."""
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            return "-"
        if endpoint.spec.format == DeliveryFormat.APPRISE:
            # Apprise URLs keep tokens anywhere, host included (Telegram's bot token).
            return f"{url_scheme(endpoint.spec.url)}://…"
        return url_origin(endpoint.spec.url)
