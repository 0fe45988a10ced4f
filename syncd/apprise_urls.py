"""Apprise, the optional extra, and what of its URLs may be shown.

Apprise (``pip install 'syncd[apprise]'``) is imported only here, and only
when a ``[[notify]]`` table is configured.  Its URLs hold secrets anywhere,
host included (Telegram's bot token), so a listing shows only the scheme.
Configuration validates URLs with it without loading the senders.
"""

from __future__ import annotations

import logging
import re
from types import ModuleType
from typing import Any
from urllib.parse import unquote

from syncd.errors import ConfigError

__all__ = [
    "INSTALL_HINT",
    "body_format",
    "check_apprise_url",
    "load_apprise",
    "network_host",
    "url_parts",
    "url_scheme",
]

INSTALL_HINT = "pip install 'syncd[apprise]'"
# URL parts shorter than this are not scrubbed: they would blot out ordinary
# words of the error ("json", "443") without protecting a secret.
_MIN_SCRUBBED_PART = 4
_URL_SEPARATORS = re.compile(r"[/:@?&=#,;+]+")


def load_apprise() -> ModuleType:
    """The ``apprise`` module; ``ConfigError`` naming the extra when it is not installed."""
    try:
        import apprise  # noqa: PLC0415 - optional: only [[notify]] needs it
    except ImportError:
        raise ConfigError(f"[[notify]] needs the apprise extra: {INSTALL_HINT}") from None
    # Apprise logs through the standard library, which nothing here configures:
    # its warnings (naming hosts, which may be tokens) would reach stderr raw.
    # Each send reads them from its own result instead.
    logger = logging.getLogger("apprise")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return apprise


def check_apprise_url(url: str) -> None:
    """Raise ``ValueError`` unless Apprise knows how to send to ``url``; never quotes it."""
    if load_apprise().Apprise.instantiate(url) is None:
        raise ValueError(
            f"Apprise cannot use this {url_scheme(url)}:// URL (unknown service or"
            " missing parts); see https://github.com/caronc/apprise/wiki"
        )


def body_format(plugin: Any) -> str:
    """The format to write for an Apprise plugin's service, by what it says it reads:
    ``"markdown"`` where it reads Markdown, else its own (``"html"`` for e-mail, or
    ``"text"``); a URL's ``?format=`` overrides, as Apprise lets it."""
    markdown = load_apprise().NotifyFormat.MARKDOWN
    return str(plugin.resolve_format(markdown).value)


def network_host(plugin: Any) -> str | None:
    """The network host an Apprise plugin's URL names, or ``None``.

    ``None`` where the URL's "host" is no address (Telegram's bot token,
    ntfy.sh's topic): looking it up would hand a secret to the DNS.
    """
    host = plugin.host
    return str(host) if host and "host" in type(plugin).template_tokens else None


def url_scheme(url: str) -> str:
    """The scheme of an Apprise URL, which is what a listing may show of it."""
    scheme, sep, _ = url.partition("://")
    return scheme.lower() if sep and scheme.isalnum() else "?"


def url_parts(url: str) -> list[str]:
    """Every part of ``url`` but its scheme that is long enough to be a secret, as sent."""
    rest = url.partition("://")[2]
    parts = _URL_SEPARATORS.split(rest)
    parts += [unquote(part) for part in parts]
    return [part for part in parts if len(part) >= _MIN_SCRUBBED_PART]
