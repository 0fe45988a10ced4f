"""Webhook delivery: from the outbox to a receiver, signed, retried, never lost.

One module per concern, each with its own small ``__all__``; import from them
directly (``syncd.delivery.sender``, ``syncd.delivery.worker``, ...).  This
package module imports none of them, so configuration can validate secrets
and destinations with the leaf modules without loading the HTTP client or
the storage.
"""

from __future__ import annotations

__all__: list[str] = []
