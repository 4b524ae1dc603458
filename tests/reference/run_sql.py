#!/usr/bin/env python3
"""Runs the SQL that `slo export --to sql` writes, in DuckDB, over a CSV of request logs.

Usage:
    slo export --to sql --spec SPEC.json | python3 tests/reference/run_sql.py --csv LOG.csv

The CSV has the columns the export expects (id, class, input_tokens, output_tokens, ttft_ms,
e2e_ms, itl_max_ms, queue_ms, status, start_time); it is loaded with fixed column types into a
table (default "requests"), the query from standard input runs against it, and the result rows are
printed as a JSON array of objects, one per class x input-length cell, in the query's order.

crates/core/tests/export_sql.rs runs this script and compares its counts with slo-core's engine.

Exit status: 0 on success, 2 for bad usage or a failing query, 3 when duckdb is not installed
(run scripts/setup.sh, which installs tests/reference/requirements.txt).
"""

import argparse
import json
import sys

# Column types of the request-log table: the schema the SQL export documents.
COLUMNS = {
    "id": "VARCHAR",
    "class": "VARCHAR",
    "input_tokens": "BIGINT",
    "output_tokens": "BIGINT",
    "ttft_ms": "DOUBLE",
    "e2e_ms": "DOUBLE",
    "itl_max_ms": "DOUBLE",
    "queue_ms": "DOUBLE",
    "status": "VARCHAR",
    "start_time": "TIMESTAMP",
}


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="request log CSV")
    parser.add_argument("--table", default="requests", help="table name the SQL reads")
    args = parser.parse_args()

    try:
        import duckdb  # noqa: PLC0415 (a clear message when it is missing)
    except ImportError:
        print(
            "run_sql.py: the python package duckdb is not installed; run scripts/setup.sh "
            "(it installs tests/reference/requirements.txt)",
            file=sys.stderr,
        )
        return 3

    query = sys.stdin.read()
    con = duckdb.connect(":memory:")
    columns = ", ".join(f"{quote_ident(k)}: '{v}'" for k, v in COLUMNS.items())
    try:
        con.execute(
            f"CREATE TABLE {quote_ident(args.table)} AS "
            f"SELECT * FROM read_csv(?, header = true, columns = {{{columns}}})",
            [args.csv],
        )
        cursor = con.execute(query)
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row)) for row in cursor.fetchall()]
        # The table must still be there: no string in the query got out of its quotes.
        con.execute(f"SELECT COUNT(*) FROM {quote_ident(args.table)}").fetchone()
    except duckdb.Error as e:
        print(f"run_sql.py: DuckDB {duckdb.__version__}: {e}", file=sys.stderr)
        return 2
    json.dump(rows, sys.stdout, indent=2, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
