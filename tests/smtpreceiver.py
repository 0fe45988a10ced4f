"""A real SMTP server on loopback (aiosmtpd) that keeps every mail: what Apprise's mailto:// sends.

No TLS and no login: ``mailto://`` without a user sends in the clear, as to
a relay on the same host::

    with SmtpReceiver() as smtp:
        ...  # notify smtp.url()
        (mail,) = smtp.wait_for(1)
        mail.get_body(("html",))
"""

from __future__ import annotations

import socket
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from types import TracebackType
from typing import Any

from aiosmtpd.controller import Controller

__all__ = ["SmtpReceiver"]

_FROM = "syncd@example.org"
_TO = "lab@example.org"


class _Keeper:
    """aiosmtpd's handler: each message's bytes, parsed, in the order they came."""

    def __init__(self) -> None:
        self.mails: list[EmailMessage] = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        mail = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(mail, EmailMessage)
        with self.arrived:
            self.mails.append(mail)
            self.arrived.notify_all()
        return "250 Message accepted for delivery"


class SmtpReceiver:
    """An SMTP server on 127.0.0.1 for one test; ``mails`` are the messages it accepted."""

    def __init__(self) -> None:
        with socket.socket() as probe:  # aiosmtpd checks its own port, so it needs a real one
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self._keeper = _Keeper()
        self._controller = Controller(self._keeper, hostname="127.0.0.1", port=self.port)

    @property
    def mails(self) -> list[EmailMessage]:
        return list(self._keeper.mails)

    def url(self, query: str = "") -> str:
        """An Apprise ``mailto://`` URL that sends here in the clear, from and to test addresses."""
        return f"mailto://127.0.0.1:{self.port}?from={_FROM}&to={_TO}{query}"

    def wait_for(self, count: int, timeout: float = 10) -> list[EmailMessage]:
        """The mails once ``count`` have arrived; ``AssertionError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._keeper.arrived:
            while len(self._keeper.mails) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self._keeper.mails)} of {count} mails arrived"
                self._keeper.arrived.wait(left)
            return list(self._keeper.mails)

    def __enter__(self) -> SmtpReceiver:
        self._controller.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._controller.stop()
