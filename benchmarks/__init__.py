"""syncd's benchmarks: ``python -m benchmarks.run`` (or ``make bench``); see README.md."""
