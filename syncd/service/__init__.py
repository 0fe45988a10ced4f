"""The orchestration: the one place that knows the order of the stages.

``app`` is the composition root (configuration, storage, the arXiv client
and the dispatcher, assembled once); ``sync`` runs a cycle (sources, then the
domain's plan, then storage in one transaction); ``backfill`` fetches the
versions histories lack; ``daemon`` schedules them and serves ``syncd.web``.
"""
