"""syncd keeps a living, auditable record of an author's arXiv papers."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
