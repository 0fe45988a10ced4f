"""Files a person points syncd at (seed pages, an authors CSV file), read whole but bounded.

A path on a command line or in a config file can name anything: a FIFO
nobody writes to (opening it to read waits forever), ``/dev/zero`` (read
whole, it fills memory in seconds), a folder, a disk image.  Such a file is
refused at once, saying what it is, rather than hanging or growing without
bound; each caller wraps the reason in its own error (``SeedError``,
``ConfigError``), which names the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UnreadableFile", "read_small_file"]


class UnreadableFile(Exception):
    """The file cannot be read, is not a regular file, or is over the caller's cap."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_small_file(path: Path, max_bytes: int, *, what: str) -> bytes:
    """The bytes of ``path``: a regular file of at most ``max_bytes``, else ``UnreadableFile``.

    ``what`` names what such a file is, for the reasons: ``a seed file``.
    """
    try:
        # Non-blocking, so that opening a FIFO returns at once instead of
        # waiting for a writer; fstat on the open file then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a NUL in the path: open() refuses it before any system call
        raise UnreadableFile(f"cannot read the file: {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _file_kind(info.st_mode)
            raise UnreadableFile(f"not a regular file ({kind}); {what} must be one")
        _check_size(info.st_size, max_bytes, what)
        # One byte over the cap tells a file that grew since fstat.
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    _check_size(len(data), max_bytes, what)
    return data


def _check_size(size: int, max_bytes: int, what: str) -> None:
    if size > max_bytes:
        raise UnreadableFile(
            f"the file is larger than the {max_bytes // (1024 * 1024)} MiB"
            f" ({max_bytes} bytes) {what} may have"
        )


def _file_kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "a special file")
