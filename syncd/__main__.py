"""``python -m syncd``: the same as the ``syncd`` command."""

import sys

from syncd.cli import main

sys.exit(main())
