"""Files at rest beside the record: owner-only, and the key the record does not hold.

The SQLite database (and its ``-wal`` and ``-shm``) holds chat endpoints'
URL hashes, the events and the outbox; the key file holds what makes those
hashes unguessable.  Both are readable by their owner only (0600).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

from syncd.errors import ConfigError

__all__ = ["make_private", "url_key"]

# Enough that no dictionary of URLs can be tried against a hash without it.
_KEY_BYTES = 32
_OWNER_ONLY = 0o600


def make_private(database: Path) -> None:
    """Create the SQLite file ``database`` owner-only if missing; tighten it and its companions.

    SQLite gives a new ``-wal`` or ``-shm`` file its database's mode, so an
    owner-only database keeps the ones made later owner-only too.  Files an
    earlier version left world-readable are tightened here, once per start;
    a file owned by another user (a reader's CLI) is left as it is.
    """
    # Already there, or not creatable (a read-only folder): SQLite says why when it opens it.
    with contextlib.suppress(OSError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _OWNER_ONLY))
    for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
        try:
            status = os.stat(path)
            if stat.S_ISREG(status.st_mode) and status.st_mode & 0o077:
                os.chmod(path, stat.S_IMODE(status.st_mode) & 0o700)
        except OSError:
            continue


def url_key(path: Path) -> bytes:
    """The key of unsigned endpoints' URL hashes, read from ``path``; made there if missing.

    A new key is 32 random bytes in hex, in a file of mode 0600.  Two
    processes starting together agree: the file appears whole or not at all,
    and the second one reads the first one's key.
    """
    try:
        key = path.read_bytes().strip()
    except FileNotFoundError:
        key = _create_key(path)
    except OSError as exc:
        raise ConfigError(f"cannot read the key file {path}: {exc.strerror or exc}") from None
    if len(key) < _KEY_BYTES:
        raise ConfigError(
            f"the key file {path} holds {len(key)} bytes, fewer than {_KEY_BYTES}: delete it"
            f" (syncd makes a new one) or write a longer key, e.g. openssl rand -hex {_KEY_BYTES}"
        )
    return key


def _create_key(path: Path) -> bytes:
    key = secrets.token_hex(_KEY_BYTES).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # mkstemp makes the file 0600; link() publishes it whole, or fails if
        # another process published its own first.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(key + b"\n")
                file.flush()
                os.fsync(file.fileno())
            os.link(temporary, path)
        except FileExistsError:
            return path.read_bytes().strip()
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the key file {path}: {exc.strerror or exc}; set [database] key_file"
            " (SYNCD_DATABASE_KEY_FILE) to a file syncd can read"
        ) from None
    return key
