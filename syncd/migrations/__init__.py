"""Alembic migrations of syncd's schema; run them with ``syncd db upgrade``."""
