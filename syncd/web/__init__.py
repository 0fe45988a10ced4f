"""What syncd serves over HTTP, and the server that serves it.

``asgi`` assembles the one ASGI app (``build_app``) from ``ops`` (metrics,
health, readiness), ``api`` (the read API, shapes in ``schemas``),
``authors_api`` and ``webhooks_api`` (authors to read and, for operators, to
follow and review; the endpoints' deliveries for operators), ``feeds``
(Atom) and ``pages`` (HTML, with ``index``: the status strip, the index's order
and search); ``server`` runs it on uvicorn for ``syncd run``.
This file imports nothing, so loading one of them loads only what it needs.
"""
