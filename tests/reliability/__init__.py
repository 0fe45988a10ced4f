"""Reliability runs: crash consistency under SIGKILL (``torture``) and upstream chaos (``soak``).

Both families replay a seeded script of upstream changes against the loopback
fake arXiv, once without faults (the reference) and once with them, and
compare what syncd stored and delivered.  What they share is in ``harness``.
"""
