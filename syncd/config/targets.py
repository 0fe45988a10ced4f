"""Where events go: the ``[[webhooks]]`` and ``[[notify]]`` tables of the configuration.

Both take the same filters (``events``, ``kinds``, and the ``authors`` and
``groups`` they route by), ``group`` and ``timeout``, validated once in
``_TargetSettings``.  Whether the authors and groups they name exist is known
only with the database: ``syncd.service.groups.check_routes`` asks at start.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Annotated, Any, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr, field_validator, model_validator

from syncd.apprise_urls import check_apprise_url, load_apprise, network_host
from syncd.config.sections import DAY, Section
from syncd.domain.author_names import check_name
from syncd.domain.groups import check_group_name
from syncd.domain.signing import signing_key
from syncd.domain.vocabulary import EVENT_TYPES, KINDS, DeliveryFormat, DeliveryGroup
from syncd.errors import ConfigError

__all__ = ["NotifySettings", "WebhookSettings"]


class _TargetSettings(Section):
    """What every delivery target takes: its filters, its grouping and its timeout."""

    events: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    # Only the events of these followed authors, and of the members of these groups.
    authors: tuple[Annotated[str, AfterValidator(check_name)], ...] = ()
    groups: tuple[Annotated[str, AfterValidator(check_group_name)], ...] = ()
    group: DeliveryGroup | None = None
    timeout: float = Field(15.0, gt=0, le=DAY)

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, kinds: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
        return kinds

    @field_validator("events")
    @classmethod
    def _known_events(cls, events: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(events) - set(EVENT_TYPES))
        if unknown:
            raise ValueError(f"unknown event types {unknown}; known: {', '.join(EVENT_TYPES)}")
        return events


class WebhookSettings(_TargetSettings):
    """One webhook endpoint; its secrets come from the file or from the environment.

    Several secrets (a list, or space-separated in the environment variable)
    sign every delivery with each of them, so receivers can rotate keys.
    Chat formats are not signed (Slack and Discord check nothing): their
    URL is the secret, and they take none.
    """

    url: str
    name: str | None = None
    format: DeliveryFormat = DeliveryFormat.STANDARD
    secret: SecretStr | tuple[SecretStr, ...] | None = None
    secret_env: str | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        # Schemes are case-insensitive (RFC 3986 3.1): HTTP://host/ is an http URL.
        if not value[:8].lower().startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port out of range
        except ValueError as exc:
            raise ValueError(f"not a usable URL: {exc}") from None
        if not parts.hostname:
            raise ValueError("must name a host")
        return value

    @field_validator("format")
    @classmethod
    def _webhook_format(cls, value: DeliveryFormat) -> DeliveryFormat:
        if value == DeliveryFormat.APPRISE:
            raise ValueError("'apprise' is for [[notify]] tables, not [[webhooks]]")
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> Self:
        if self.format != DeliveryFormat.STANDARD:
            if self.secret is not None or self.secret_env is not None:
                raise ValueError(
                    f"format '{self.format.value}' is not signed: give no 'secret' or 'secret_env'"
                )
            return self
        if (self.secret is None) == (self.secret_env is None):
            raise ValueError("give exactly one of 'secret' and 'secret_env'")
        if self.secret_env is not None and not os.environ.get(self.secret_env, "").strip():
            raise ValueError(f"environment variable {self.secret_env} (secret_env) is not set")
        if self.secret_env is not None:
            _check_secrets(os.environ[self.secret_env].split())
        return self

    @field_validator("secret")
    @classmethod
    def _usable_secrets(
        cls, value: SecretStr | tuple[SecretStr, ...] | None
    ) -> SecretStr | tuple[SecretStr, ...] | None:
        if value is not None:
            values = value if isinstance(value, tuple) else (value,)
            _check_secrets([v.get_secret_value() for v in values])
        return value

    @property
    def display_name(self) -> str:
        """The endpoint's name in logs, CLI output and the outbox: ``name``, else the host.

        Never the path: chat services put their token there.
        """
        return self.name or self.url.split("://", 1)[-1].split("/", 1)[0].split("@")[-1]

    @property
    def grouping(self) -> DeliveryGroup:
        """``group``, else one message per cycle for chat formats and per event for the rest."""
        if self.group is not None:
            return self.group
        if self.format == DeliveryFormat.STANDARD:
            return DeliveryGroup.EVENT
        return DeliveryGroup.CYCLE

    def secret_values(self) -> list[str]:
        """Every signing secret, in order; read from the environment for ``secret_env``."""
        if self.secret_env is not None:
            return os.environ[self.secret_env].split()
        if isinstance(self.secret, tuple):
            return [s.get_secret_value() for s in self.secret]
        return [self.secret.get_secret_value()] if self.secret is not None else []


def _apprise_url(url: SecretStr) -> SecretStr:
    check_apprise_url(url.get_secret_value())
    return url


class NotifySettings(_TargetSettings):
    """One ``[[notify]]`` table: Apprise URLs (email, Telegram, Matrix, ntfy, ...).

    Each URL is a target of its own, ``<name>#1``, ``<name>#2``, ...: its own
    deliveries, retries and dead letters.  The URLs are secrets.
    """

    name: str = Field(min_length=1, max_length=180)
    urls: tuple[Annotated[SecretStr, AfterValidator(_apprise_url)], ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _apprise_installed(cls, data: Any) -> Any:
        try:
            load_apprise()
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return data

    @property
    def grouping(self) -> DeliveryGroup:
        """``group``, else one message per cycle: Apprise targets are read like chats."""
        return self.group if self.group is not None else DeliveryGroup.CYCLE

    def network_hosts(self) -> list[str | None]:
        """Each URL's network host; ``None`` where Apprise's "host" is no address (a token)."""
        apprise = load_apprise()
        return [
            network_host(apprise.Apprise.instantiate(url.get_secret_value())) for url in self.urls
        ]

    def targets(self) -> list[tuple[str, str]]:
        """``(endpoint name, URL)`` of each URL, numbered from 1."""
        return [(f"{self.name}#{n}", url.get_secret_value()) for n, url in enumerate(self.urls, 1)]


def _check_secrets(secrets: Sequence[str]) -> None:
    """At least one secret, each a usable signing key; the message never holds a secret."""
    if not secrets:
        raise ValueError("give at least one secret")
    for secret in secrets:
        try:
            signing_key(secret)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
