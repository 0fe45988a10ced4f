"""Whether an arXiv version is a withdrawal, and who withdrew it, read from arXiv's notice.

arXiv withdraws a paper by announcing a new version that carries a notice
(docs: ``official_help_withdraw.md``).  Since the 2023 process the notice
opens the abstract ("This paper has been withdrawn by Jane Doe") and the
comment holds the author's reason, often without the word "withdrawn".
Before, the notice opened the comment or the abstract, in the submitter's
own words: "The paper has been withdrawn", "This paper and abstract have
been withdrawn", "paper withdrawn by author", "Withdrawn".  Administrators
withdraw too, behind an ``arXiv admin note:`` lead-in or "by arXiv
administrators" ("This has been withdrawn by arXiv administrators").

So a version is a withdrawal when its abstract, or its comment, *opens*
with such a notice: "this/these/the/the following paper|submission|...
has/have been withdrawn", or "this has been withdrawn", within the first
sentence, after an optional ``[`` or admin-note lead-in; or a bare
"(paper) withdrawn" followed by the end, a stop, "by", "due", "because" or
"since".  In a comment a notice may also start a later sentence ("5 pages,
1 figure. This paper has been withdrawn by the author"), or follow an
``arXiv admin note:`` anywhere, as arXiv appends its notes there; there
only "this/these ..." and admin notes count, since "The paper arXiv:...
has been withdrawn" after a first sentence is about another paper.  The
word elsewhere decides nothing: "Supersedes the withdrawn arXiv:2101.00001"
is a comment about another paper, "withdrawn from the proceedings" is
about a venue, and "rofecoxib has been withdrawn from the market" is about
a drug.

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
prefix test, and most comments by a substring test, before any regular
expression runs.
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
# ("This version of the paper", "This paper and abstract"), never a clause: in
# "This paper shows that rofecoxib has been withdrawn" the paper is not.
_BETWEEN = (
    r"(?:(?!\b(?:that|which|who|whom|whose|why|how|whether|because|since|when|where|if)\b)"
    rf"{_SAME_SENTENCE}){{0,40}}?"
)

# What a notice calls the withdrawn thing; "This papers has been withdrawn" is real.
_PAPER = r"(?:paper|submission|article|manuscript|work|version|preprint)s?\b"
_HAS_BEEN_WITHDRAWN = r"ha(?:s|ve)\s+been\s+withdrawn\b"
# "This paper has been withdrawn", "These papers have been withdrawn", "This has been withdrawn".
_THIS_NOTICE = rf"th(?:is|ese)(?:\s+{_PAPER}{_BETWEEN})?\s+{_HAS_BEEN_WITHDRAWN}"
# What follows a bare "withdrawn" that is a notice ("Withdrawn.", "withdrawn by
# arXiv administrators", "paper withdrawn due to ..."), not an adjective
# ("Withdrawn drugs dataset included").
_BARE_END = r"(?=\s*(?:[.,;:!?)\]]|$)|\s+(?:by|due|because|since)\b)"
# The notices a text may open with: those above, "The (following) paper has
# been withdrawn", and a bare "(paper) withdrawn".
_OPENING_NOTICE = (
    rf"(?:{_THIS_NOTICE}"
    rf"|the(?:\s+following)?\s+{_PAPER}{_BETWEEN}\s+{_HAS_BEEN_WITHDRAWN}"
    rf"|(?:papers?\s+)?withdrawn\b{_BARE_END})"
)
_ADMIN_LEAD = r"(?P<admin>arxiv\s+admin(?:istrator)?\s+note\s*:\s*\[?\s*)"
# After the notice: not a venue's withdrawal ("withdrawn from the proceedings"),
# then the rest of its sentence, where "by arXiv administrators" may come.
_AFTER = rf"(?!\s+from\s+(?!arxiv\b))(?P<tail>{_SAME_SENTENCE}{{0,120}})"

# A notice at the start of a text.  Whitespace is \s+ so a notice the old
# backend hard-wrapped reads the same as an unwrapped one.
_OPENING_RE = re.compile(rf"\s*\[?\s*{_ADMIN_LEAD}?{_OPENING_NOTICE}{_AFTER}", re.IGNORECASE)
# A notice inside a comment: one that starts a later sentence, or an admin
# note arXiv appended.  The leftmost match wins, so an admin note's lead-in is
# read before the sentence its colon seems to start.
_IN_COMMENT_RE = re.compile(
    rf"(?:[.;:!?]\s+\[?\s*{_THIS_NOTICE}|{_ADMIN_LEAD}{_OPENING_NOTICE}){_AFTER}",
    re.IGNORECASE,
)

# "withdrawn by arXiv administrators", "by the arXiv admins", "by the moderators".
_BY_ADMIN_RE = re.compile(r"\bby\s+(?:the\s+)?(?:arxiv\b|admin|moderator)", re.IGNORECASE)

# The lower-cased first letters an abstract's notice can start with (after "["
# and spaces): "this"/"these", "the (following)", "arXiv admin note",
# "paper withdrawn", "withdrawn".
_OPENINGS = ("thi", "the", "arx", "pap", "wit")
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
    notice = _abstract_notice(abstract) or _comment_notice(comment)
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


def _abstract_notice(abstract: str | None) -> Withdrawal | None:
    """The withdrawal an abstract's opening announces; ``None`` if it announces none.

    Only the opening: a long abstract may discuss withdrawals, while arXiv's
    notice replaces it or is put before it.
    """
    # Cheap tests first: the right opening, then the word where a notice has it.
    if not abstract or abstract[:12].lstrip(_LEADING)[:3].lower() not in _OPENINGS:
        return None
    if "withdrawn" not in abstract[:_HEAD].lower():
        return None
    return _verdict(_OPENING_RE.match(abstract))


def _comment_notice(comment: str | None) -> Withdrawal | None:
    """The withdrawal a comment announces, at its opening or in a later sentence."""
    if not comment or "withdrawn" not in comment.lower():
        return None
    return _verdict(_OPENING_RE.match(comment)) or _verdict(_IN_COMMENT_RE.search(comment))


def _verdict(notice: re.Match[str] | None) -> Withdrawal | None:
    if notice is None:
        return None
    admin = notice.group("admin") is not None or _BY_ADMIN_RE.search(notice.group("tail"))
    return Withdrawal(True, "admin" if admin else "author")
