"""Webhook delivery: from the outbox to a receiver, signed, retried, never lost.

One module per concern, each with its own small ``__all__``; import from them
directly (``syncd.delivery.sender``, ``syncd.delivery.worker``, ...).  This
package module imports none of them, so importing one loads only what it
needs.  What configuration checks at load (the destination policy, signing
secrets, the retry schedule) is the domain's; Apprise URLs are
``syncd.apprise_urls``'s: configuration imports nothing from here.
"""

from __future__ import annotations

__all__: list[str] = []
