"""Whether an arXiv version is a withdrawal, and who withdrew it, read from arXiv's notice.

arXiv withdraws a paper by announcing a new version that carries a notice
(docs: ``official_help_withdraw.md``).  Since the 2023 process the notice
opens the abstract ("This paper has been withdrawn by Jane Doe") and the
comment holds the author's reason, often without the word "withdrawn".
Administrators withdraw too, behind an ``arXiv admin note:`` lead-in or
"by arXiv administrators".

So a version is a withdrawal when its abstract, or its comment, *opens*
with such a notice: "this/the following paper|submission|... has been
withdrawn" within the first sentence, after an optional ``[`` or admin-note
lead-in.  In a comment a notice may also follow an ``arXiv admin note:``
anywhere, as arXiv appends its notes there.  The word elsewhere decides
nothing: "Supersedes the withdrawn arXiv:2101.00001" is a comment about
another paper, and "withdrawn from the proceedings" is about a venue.

A notice withdraws for the administrators when it has their lead-in or says
"by arXiv administrators"; any other notice (by a named person, "by the
authors", or naming no one) is the submitter's, since arXiv labels the
withdrawals its administrators make.

The authoritative source, when one is read: OAI-PMH's ``arXivRaw`` lists each
version's ``source_type``, and a flag ``I`` ("ignore": no files) marks a
withdrawn version.  A reader of that format passes
``source_type_verdict(source_type)`` as ``detect_withdrawal``'s
``authoritative``: it then decides *whether*, and the text still tells *who*.

Pure functions of text: the parser calls ``detect_withdrawal`` for every
entry of every page, so most abstracts are turned away by a three-character
prefix test before any regular expression runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "NOT_WITHDRAWN",
    "Withdrawal",
    "WithdrawnBy",
    "detect_withdrawal",
    "source_type_verdict",
]

WithdrawnBy = Literal["author", "admin"]


@dataclass(frozen=True, slots=True)
class Withdrawal:
    """The verdict on one version: withdrawn or not, and by whom when the notice says.

    ``by`` is ``None`` for a version that is not withdrawn, and for one an
    authoritative source calls withdrawn while its text names no one.
    """

    withdrawn: bool
    by: WithdrawnBy | None = None


NOT_WITHDRAWN = Withdrawal(False)

# How a sentence may continue: anything but a full stop, "!" or "?" that ends
# it (followed by a space or the end).  "arXiv:2101.00001" stays one sentence.
_SAME_SENTENCE = r"(?:[^.!?]|[.!?](?=\S))"

# Between the subject and "has been withdrawn" a notice puts a few words
# ("This version of the paper", "This submission (v2)"), never a clause: in
# "This paper shows that rofecoxib has been withdrawn" the paper is not.
_BETWEEN = (
    r"(?:(?!\b(?:that|which|who|whom|whose|why|how|whether|because|since|when|where|if)\b)"
    rf"{_SAME_SENTENCE}){{0,40}}?"
)

# The notice, matched at the start of a text or just after an admin note's
# lead-in.  Whitespace is \s+ so a notice the old backend hard-wrapped reads
# the same as an unwrapped one.
_NOTICE_RE = re.compile(
    rf"""
    \s*\[?\s*
    (?P<admin>arxiv\s+admin(?:istrator)?\s+note\s*:\s*\[?\s*)?
    (?:this|the\s+following)\s+
    (?:paper|submission|article|manuscript|work|version|preprint)\b
    {_BETWEEN}
    \s+has\s+been\s+withdrawn\b
    (?!\s+from\s+(?!arxiv\b))       # "withdrawn from the proceedings": a venue's, not arXiv's
    (?P<tail>{_SAME_SENTENCE}{{0,120}})
    """,
    re.IGNORECASE | re.VERBOSE,
)

# Where arXiv appended one of its notes inside a text.
_ADMIN_NOTE_RE = re.compile(r"arxiv\s+admin(?:istrator)?\s+note\s*:", re.IGNORECASE)

# "withdrawn by arXiv administrators", "by the arXiv admins", "by the moderators".
_BY_ADMIN_RE = re.compile(r"\bby\s+(?:the\s+)?(?:arxiv\b|admin|moderator)", re.IGNORECASE)

# The lower-cased first letters a notice can start with (after "[" and spaces):
# "this", "the following", "arXiv admin note".
_OPENINGS = ("thi", "the", "arx")
_LEADING = " \t\r\n["
# A notice's "withdrawn" comes within its first 200 characters: a lead-in,
# a subject, at most 40 characters between (_BETWEEN), and wrapping spaces.
_HEAD = 200


def detect_withdrawal(
    abstract: str | None, comment: str | None, *, authoritative: bool | None = None
) -> Withdrawal:
    """Whether a version is withdrawn, and by whom, from its abstract and comment.

    ``authoritative`` is a verdict from a source that knows, such as OAI-PMH
    ``arXivRaw``'s per-version ``source_type`` (see ``source_type_verdict``);
    ``None`` when none was read.  When given it overrides the text, which
    then only says who withdrew.
    """
    notice = _opening(abstract) or _opening(comment) or _appended(comment)
    if authoritative is None:
        return notice or NOT_WITHDRAWN
    if not authoritative:
        return NOT_WITHDRAWN
    return notice or Withdrawal(True)


def source_type_verdict(source_type: str | None) -> bool | None:
    """``arXivRaw``'s ``<source_type>`` of a version as an authoritative verdict.

    arXiv's source flags mark a withdrawn version with ``I`` ("ignore": the
    version has no files); ``None`` when the source type is not known.
    """
    if source_type is None:
        return None
    return "I" in source_type


def _opening(text: str | None) -> Withdrawal | None:
    """The withdrawal a text's opening announces; ``None`` if it announces none."""
    # Cheap tests first: the right opening, then the word where a notice has it.
    if not text or text[:12].lstrip(_LEADING)[:3].lower() not in _OPENINGS:
        return None
    if "withdrawn" not in text[:_HEAD].lower():
        return None
    return _read(text, 0)


def _appended(comment: str | None) -> Withdrawal | None:
    """The withdrawal an admin note arXiv appended to a comment announces, if any.

    Only comments: arXiv appends its notes there ("12 pages. arXiv admin
    note: ..."), while in an abstract its notice opens the text.
    """
    # Case-sensitive but for the first letter: arXiv writes "arXiv admin note:".
    if not comment or "dmin note" not in comment:
        return None
    for lead in _ADMIN_NOTE_RE.finditer(comment):
        found = _read(comment, lead.start())
        if found is not None:
            return found
    return None


def _read(text: str, start: int) -> Withdrawal | None:
    match = _NOTICE_RE.match(text, start)
    if match is None:
        return None
    admin = match.group("admin") is not None or _BY_ADMIN_RE.search(match.group("tail"))
    return Withdrawal(True, "admin" if admin else "author")
