"""Configuration: one TOML file, a few environment overrides, validated once.

``load_settings`` is called by the CLI; everything else receives the frozen
``Settings`` it returns.  Environment variables named ``SYNCD_<SECTION>_<KEY>``
(``SYNCD_DATABASE_URL``, ``SYNCD_ARXIV_API_URL``, ...) override the file.
Relative paths in the file resolve against the file's own folder.

``loading`` reads the file, ``settings`` holds the top-level tables, ``targets`` the
``[[webhooks]]`` and ``[[notify]]`` tables, ``sections`` what every table
shares (the base model and the bounds of durations), and ``reporting`` what an
invalid configuration says (blaming the file or the environment variable).
"""

from __future__ import annotations

from syncd.config.loading import DEFAULT_CONFIG_PATH, load_settings
from syncd.config.publications import PublicationsSettings
from syncd.config.settings import (
    ArxivSettings,
    AuthorSettings,
    DatabaseSettings,
    DeliverySettings,
    HarvestSettings,
    HttpSettings,
    LogSettings,
    ScheduleSettings,
    Settings,
    SyncSettings,
)
from syncd.config.targets import NotifySettings, WebhookSettings

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ArxivSettings",
    "AuthorSettings",
    "DatabaseSettings",
    "DeliverySettings",
    "HarvestSettings",
    "HttpSettings",
    "LogSettings",
    "NotifySettings",
    "PublicationsSettings",
    "ScheduleSettings",
    "Settings",
    "SyncSettings",
    "WebhookSettings",
    "load_settings",
]
