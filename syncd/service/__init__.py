"""The orchestration: the one place that knows the order of the stages.

``app`` is the composition root (configuration, storage, the arXiv client
and the dispatcher, assembled once); ``sync`` runs a cycle (sources, then the
domain's plan, then storage in one transaction); ``backfill`` fetches the
versions histories lack.  The daemon that schedules them beside the delivery
worker and the web server is wiring, and lives with the entry points
(``syncd.cli.daemon``).
"""
