"""What of a webhook URL, its secrets and a receiver's answer may be shown or stored.

Secrets and URL credentials never reach a log line, an error or a repr: URLs
are shown as ``redact_url`` gives them (``url_origin`` in listings), and
error texts are scrubbed of the secrets, userinfo and query string of the
request they belong to.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit

from syncd.domain.signing import SECRET_PREFIX

__all__ = ["redact_url", "scrub", "url_origin"]

_REDACTED = "[redacted]"
_MIN_SCRUBBED_VALUE = 4


def redact_url(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: no userinfo, query or fragment."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not host:
        return "<invalid URL>"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path}"


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, and ``/…`` for any path: what lists may show.

    Slack-, Discord- and Mattermost-style endpoints carry their token in the
    path, so a listing shows where an endpoint points and nothing more.
    """
    redacted = redact_url(url)
    scheme, sep, rest = redacted.partition("://")
    if not sep:
        return redacted
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}/…" if slash and path else f"{scheme}://{host}"


def _sensitive_strings(url: str, secrets: Sequence[str]) -> list[str]:
    """What must not appear in an error about a request to ``url`` signed with ``secrets``.

    The secrets are never sent, but the URL's query and credentials are, and a
    receiver may echo them (request line, ``Authorization``) in its answer.
    """
    found: list[str] = []
    for secret in secrets:
        found += [secret, secret.strip(), secret.strip().removeprefix(SECRET_PREFIX)]
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return sorted({s for s in [*found, url] if s}, key=len, reverse=True)
    if url != redact_url(url):
        found.append(url)
    found += [parts.netloc.rpartition("@")[0], parts.query, parts.fragment]
    # Single values too, when long enough to be a token: shorter ones would
    # blot out ordinary words and digits of the error without protecting anything.
    values = [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    values += [pair.partition("=")[2] for pair in parts.query.split("&")]  # as sent, encoded
    found += [value for value in [*values, password or ""] if len(value) >= _MIN_SCRUBBED_VALUE]
    if username is not None or password is not None:
        basic = f"{username or ''}:{password or ''}".encode()
        found.append(base64.b64encode(basic).decode("ascii"))
    # Longest first, so a shorter match cannot leave part of a longer secret behind.
    return sorted({s for s in found if s}, key=len, reverse=True)


def scrub(text: str, url: str, secrets: Sequence[str]) -> str:
    """``text`` without the URL's credentials and query, the secrets, or control characters."""
    for sensitive in _sensitive_strings(url, secrets):
        text = text.replace(sensitive, _REDACTED)
    # One printable line: the text goes into log lines and the database.
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
