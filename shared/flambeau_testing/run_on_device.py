"""Run the operator table on a device against the CPU and print a JSON summary.

    python -m flambeau_testing.run_on_device testdev
    python -m flambeau_testing.run_on_device cuda --rows 'linalg_.*' --dtypes float32
    python -m flambeau_testing.run_on_device testdev --ops add,mul,sum,bmm,fill_,copy_
    python -m flambeau_testing.run_on_device --list     # the devices this environment has

The summary (stdout) counts the rows and cases compared, lists every mismatch, and
counts the skipped cases by reason (the backend's NotImplementedError message). The
exit status is 1 when any case differs from the CPU, 2 when the device is unusable.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter

import flambeau

from .devices import devices
from .on_device import check_on_device
from .optable import OpTest, all_tests


def select_rows(pattern: str | None = None, ops: set[str] | None = None) -> list[OpTest]:
    """The table's rows whose id fully matches `pattern` and whose operator is one of
    `ops` (None: no restriction).

    >>> [op.id for op in select_rows("add.*", {"add"})]
    ['add', 'add_alpha', 'add_complex']
    """
    rows = all_tests()
    if pattern is not None:
        rows = [op for op in rows if re.fullmatch(pattern, op.id)]
    if ops is not None:
        rows = [op for op in rows if op.name in ops]
    return rows


def summarize(device: str, rows: list[OpTest], dtypes: tuple[str, ...] | None) -> dict:
    """check_on_device over `rows` (each in its own dtypes that are in `dtypes`, all of
    them when None), as a JSON-ready summary.

    >>> s = summarize("cpu", select_rows("mul"), ("int64",))
    >>> s["rows_checked"], s["mismatches"], s["cases_checked"] > 0
    (['mul'], [], True)
    """
    summary = {"device": device, "rows": len(rows), "rows_checked": [], "cases_checked": 0}
    mismatches, skip_reasons = [], Counter()
    for op in rows:
        wanted = op.dtypes if dtypes is None else tuple(d for d in op.dtypes if d in dtypes)
        try:
            report = check_on_device(op, device, wanted)
        except Exception as e:  # a row the driver cannot run is a finding, not a crash
            mismatches.append({"case": op.id, "message": f"{type(e).__name__}: {e}"})
            continue
        if report.checked:
            summary["rows_checked"].append(op.id)
        summary["cases_checked"] += len(report.checked)
        skip_reasons.update(reason for _, reason in report.skipped)
        mismatches += [{"case": case, "message": what} for case, what in report.mismatches]
    summary["cases_skipped"] = sum(skip_reasons.values())
    summary["skip_reasons"] = dict(skip_reasons.most_common())
    summary["mismatches"] = mismatches
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m flambeau_testing.run_on_device",
        description="Run the operator table on DEVICE and compare every result with the CPU's.",
    )
    parser.add_argument("device", nargs="?", help="a device, e.g. cuda, testdev, cuda:1")
    parser.add_argument("--list", action="store_true", help="print the devices found and exit")
    parser.add_argument("--rows", metavar="REGEX", help="only the rows whose id matches")
    parser.add_argument("--dtypes", metavar="D,D", help="only these dtypes, e.g. float32,int64")
    parser.add_argument(
        "--ops", metavar="OP,OP", help="only the rows of these operators, e.g. add,mul"
    )
    args = parser.parse_args(argv)
    if args.list:
        print(json.dumps(devices()))
        return 0
    if args.device is None:
        parser.error("name a device, or pass --list")
    try:
        flambeau.zeros(1).to(args.device)
    except Exception as e:
        print(f"device {args.device!r} is unusable: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    start = time.monotonic()
    rows = select_rows(args.rows, set(args.ops.split(",")) if args.ops else None)
    dtypes = tuple(args.dtypes.split(",")) if args.dtypes else None
    summary = summarize(args.device, rows, dtypes)
    summary["seconds"] = round(time.monotonic() - start, 2)
    print(json.dumps(summary, indent=1))
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
