"""``syncd report --group G [--since D] [--until D] [--csv|--json]``: a group's report.

Per member, the new papers, new versions and withdrawals of whole UTC days,
and the group's total, each change once (``syncd.domain.reports``): a table,
CSV for a spreadsheet, or JSON.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from syncd.cli.output import EXIT_OK, EXIT_USAGE, fail, print_json, print_table
from syncd.cli.table import Column
from syncd.domain.reports import report_csv, report_period
from syncd.domain.views import report_json
from syncd.service.app import App
from syncd.service.groups import named_group
from syncd.service.reports import report_of

__all__ = ["report"]


def report(args: argparse.Namespace, app: App) -> int:
    try:
        period = report_period(args.since, args.until, datetime.now(UTC).date())
    except ValueError as exc:
        return fail(EXIT_USAGE, str(exc))
    group = named_group(app.storage, args.group)
    found = report_of(app.storage, group.name, group.members, period)
    if args.json:
        return print_json(report_json(found))
    if args.csv:
        sys.stdout.write(report_csv(found))
        return EXIT_OK
    print(f"{group.name}: {period.since.isoformat()} to {period.until.isoformat()} (UTC)")
    columns = (
        Column("PERSON", shrink_to=12),
        Column("NEW PAPERS"),
        Column("NEW VERSIONS"),
        Column("WITHDRAWALS"),
    )
    print_table(columns, [tuple(map(str, row.values)) for row in (*found.rows, found.total)])
    return EXIT_OK
