"""The `[publications]` table: following papers to their published versions (off by default).

Crossref's polite pool allows 10 requests a second and 3 at once to a
client that names a ``mailto`` (``[arxiv] contact``), 5 a second and 1 at
once to others; ``crossref_interval`` keeps under both.  OpenAlex has asked
for a key since February 2026 (single-work lookups are free, filtered lists
are not): without ``openalex_key`` it is never asked.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator, model_validator

from syncd.config.sections import DAY, HOUR, WEEK, Section

__all__ = ["PublicationsSettings"]


class PublicationsSettings(Section):
    """Where papers were published: Crossref and OpenAlex, looked up on a slow schedule."""

    enabled: bool = False
    crossref_url: str = "https://api.crossref.org"
    crossref_interval: float = Field(0.2, ge=0, le=HOUR)
    openalex_url: str = "https://api.openalex.org"
    openalex_key: SecretStr | None = Field(None, min_length=1, max_length=512)
    openalex_interval: float = Field(0.1, ge=0, le=HOUR)
    # A bibliographic match at or above accept_score is announced; from review_score it
    # waits for a person (syncd publications review); below, nothing.
    accept_score: float = Field(0.9, gt=0, le=1)
    review_score: float = Field(0.6, gt=0, le=1)
    # How often a paper is looked up again after its first lookup (spread over it).
    interval: float = Field(WEEK, ge=60, le=365 * DAY)
    timeout: float = Field(30.0, gt=0, le=HOUR)
    max_response_bytes: int = Field(16 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)

    @field_validator("crossref_url", "openalex_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _ordered_scores(self) -> PublicationsSettings:
        if self.review_score > self.accept_score:
            raise ValueError("review_score must not be above accept_score")
        return self
