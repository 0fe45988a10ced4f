"""Standard Webhooks signatures: the HMAC key of a ``whsec_`` secret, and the header.

Pure: configuration validates secrets with ``signing_key`` at load; the sender signs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

from syncd.errors import ConfigError

__all__ = ["SECRET_PREFIX", "sign", "signing_key"]

SECRET_PREFIX = "whsec_"


def signing_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret (or bare base64); ``ConfigError`` if invalid.

    The message never quotes the secret, so callers may show it to operators.
    """
    # Strip: a secret read from a file or an environment variable often ends in a newline.
    encoded = secret.strip().removeprefix(SECRET_PREFIX)
    # Accept unpadded base64, as the reference implementations do.
    padded = encoded + "=" * (-len(encoded) % 4)
    try:
        key = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(
            "webhook secret is not valid base64: expected 'whsec_' followed by standard base64"
            " (for example 'whsec_' + the output of 'openssl rand -base64 32')"
        ) from None
    if not key:
        raise ConfigError("webhook secret is empty: expected 'whsec_' followed by base64")
    return key


def sign(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: ``v1,<base64 HMAC-SHA256>`` per secret, space-separated.

    Several secrets mean key rotation: a receiver holding any one of them verifies.
    """
    if not secrets:
        raise ConfigError("a webhook endpoint needs at least one secret to sign with")
    signed = f"{msg_id}.{timestamp}.".encode() + body
    signatures = []
    for number, secret in enumerate(secrets, start=1):
        try:
            key = signing_key(secret)
        except ConfigError as exc:
            if len(secrets) == 1:
                raise
            raise ConfigError(f"secret {number} of {len(secrets)}: {exc}") from None
        digest = hmac.new(key, signed, hashlib.sha256).digest()
        signatures.append("v1," + base64.b64encode(digest).decode("ascii"))
    return " ".join(signatures)
