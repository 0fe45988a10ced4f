"""Tests for syncd.httpio's place in the package: shared by both clients, depending on neither."""

from __future__ import annotations

import subprocess
import sys


def syncd_modules_loaded_by(module: str) -> set[str]:
    """The ``syncd`` modules a fresh interpreter has loaded after importing ``module``."""
    code = (
        f"import sys, {module}\n"
        "print(' '.join(m for m in sys.modules if m == 'syncd' or m.startswith('syncd.')))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(output.split())


def test_httpio_imports_nothing_else_of_syncd() -> None:
    """httpio loads at most syncd.errors: no configuration, metrics, store or webhooks."""
    assert syncd_modules_loaded_by("syncd.httpio") <= {"syncd", "syncd.httpio", "syncd.errors"}


def test_webhooks_do_not_import_the_arxiv_client() -> None:
    """The webhook sender gets its HTTP helpers from httpio, not from the arXiv client."""
    loaded = syncd_modules_loaded_by("syncd.webhooks")
    assert "syncd.httpio" in loaded
    assert not any(m == "syncd.arxiv" or m.startswith("syncd.arxiv.") for m in loaded)
