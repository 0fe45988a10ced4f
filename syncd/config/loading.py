"""Reading the config file: which file, its TOML, its relative paths, then ``Settings``.

Relative paths in the file (seed documents, a SQLite database, the key file)
resolve against the file's own folder, whatever the working directory.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from syncd.config.reporting import invalid_configuration
from syncd.config.settings import Settings
from syncd.errors import ConfigError

__all__ = ["DEFAULT_CONFIG_PATH", "config_path", "load_settings"]

DEFAULT_CONFIG_PATH = Path("config/syncd.toml")


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """The config file to read: ``--config``, else ``SYNCD_CONFIG``, else the default."""
    if explicit is not None:
        return Path(explicit)
    return Path(os.environ.get("SYNCD_CONFIG") or DEFAULT_CONFIG_PATH)


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Read, resolve and validate the configuration; raise ``ConfigError`` naming the bad key."""
    file = config_path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: config file not found (use --config or SYNCD_CONFIG)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config file: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    private = sorted(k for k in raw if k.startswith("_"))
    if private:
        # pydantic-settings would take these as its own init arguments.
        raise ConfigError(f"{file}: invalid configuration:\n  {private[0]}: unknown key")
    _resolve_paths(raw, file.resolve().parent)
    try:
        return Settings(**raw)
    except ValidationError as exc:
        raise ConfigError(invalid_configuration(str(file), exc, os.environ)) from None


def _resolve_paths(raw: dict[str, Any], base: Path) -> None:
    """Make the file's relative seed paths, SQLite path and key file relative to ``base``."""
    authors = raw.get("authors")
    for author in authors if isinstance(authors, list) else []:
        if isinstance(author, dict) and isinstance(author.get("seeds"), list):
            author["seeds"] = [_resolve_path(s, base) for s in author["seeds"]]
    database = raw.get("database")
    if isinstance(database, dict) and isinstance(database.get("url"), str):
        database["url"] = _resolve_sqlite_url(database["url"], base)
    if isinstance(database, dict) and "key_file" in database:
        database["key_file"] = _resolve_path(database["key_file"], base)


def _resolve_path(value: object, base: Path) -> object:
    # NUL cannot be in a path; validation names the key, so leave it as it is.
    if not isinstance(value, str) or "\x00" in value or Path(value).is_absolute():
        return value
    return str((base / value).resolve())


def _resolve_sqlite_url(url: str, base: Path) -> str:
    prefix = "sqlite:///"
    path = url[len(prefix) :]
    if not url.startswith(prefix) or not path or path.startswith("/") or path == ":memory:":
        return url
    return prefix + str(_resolve_path(path, base))
