"""The pure domain: values and decisions, no I/O.

``record`` (the canonical record and arXiv ids), ``canonical`` and ``tex``
(a record read from any of arXiv's formats as the API reads it),
``vocabulary`` (the names events, statuses and formats use), ``model``
(the frozen types storage hands out and takes), ``withdrawal``, ``diff``,
``linking``, ``planner`` (what a sync cycle writes), ``refusals`` (when to
ask again for a version arXiv refuses), ``cadence`` (when an author's feed
and sweep come due), ``throttle`` (when an arXiv host that throttles us may
be asked again), ``views`` (the JSON shapes of the public surface),
``destinations`` (where a webhook may go), ``signing`` (Standard Webhooks
secrets and signatures), ``retries`` (when a failed delivery is tried again)
and ``textcontrols``.  No module here imports ``syncd.storage``, SQLAlchemy or
httpx (``tests/unit/test_structure.py``), so importing one loads neither;
this file imports nothing, so importing a submodule loads only what it needs.
"""
