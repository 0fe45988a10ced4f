"""Everything that reads upstream and hands the planner records.

``arxiv`` is the arXiv API's client and its Atom parser; ``seeds`` reads the
seed documents, captured pages about an author.  Every source yields the same
``syncd.domain.record.Record`` shape, so a paper is planned alike whoever saw
it.  A source never imports storage: the orchestrator (``syncd.service``)
hands its records on.
"""
