"""How a change reads: described once, rendered for every place a person reads it.

``field_diffs`` turns what storage keeps of a change (an event's or a
revision's ``changes``) into lines of segments, ``describe`` an event into
the words of a message around them; each target renders those with its own
escaping beside it:

- ``html``: the Atom feeds and the web pages (escaped, arXiv strings in ``<bdi>``);
- ``text``: what the chat targets share (styles, cutting at a word within a
  length) and plain text;
- ``mrkdwn``: Slack's mrkdwn; ``markdown``: Markdown (Discord, Apprise's Markdown services);
- ``neutral``: what every text target does last (no mention, no link, no bidi control);
- ``email``: an e-mail's HTML (inline styles; the plain part's marks hidden in it);
- ``notification``: Apprise's title and body, in the format its service reads.

Pure: nothing here reads the database or the network.  Platform bodies
within platform limits (Slack's blocks, Discord's embeds) are built in
``syncd.delivery``, the cache of rendered HTML in ``syncd.web.fragments``.
Import from the modules directly.
"""

from __future__ import annotations

__all__: list[str] = []
