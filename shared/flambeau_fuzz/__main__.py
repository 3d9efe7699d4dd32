"""python -m flambeau_fuzz: fuzz every operator of flambeau.ops_table() (see __init__)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import report, sanitizer
from .runner import Runner, Settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m flambeau_fuzz", description=__doc__)
    p.add_argument("--seed", type=int, default=0, help="call i of seed s is always the same call")
    p.add_argument("--budget", type=float, help="seconds to fuzz for (default 60 without --calls)")
    p.add_argument("--calls", type=int, help="stop after this many calls")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    # 30 s: a legitimate pass over 2**31 elements (random_ of a huge view) takes up to 12 s here.
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a call is a hang")
    p.add_argument("--memory-gb", type=float, default=4.0, help="address-space limit per worker")
    p.add_argument("--threads", type=int, help="OpenMP threads per worker (default: cores/workers)")
    p.add_argument("--ops", help="only operators whose name (or name.overload) matches this regex")
    p.add_argument("--report", type=Path, default=Path("fuzz-report"), help="output directory")
    p.add_argument(
        "--sanitized", nargs="?", const="auto", default="",
        help="flambeau is built with ASan/UBSan: preload this runtime (default: gcc's libasan.so)",
    )  # fmt: skip
    p.add_argument(
        "--oracle", choices=["torch"],
        help="also run every call against PyTorch 2.13 and report disagreements that are ours",
    )  # fmt: skip
    p.add_argument("--oracle-path", help="a site-packages folder holding torch, if not importable")
    p.add_argument(
        "--replay", type=int, metavar="INDEX", help="print call INDEX's program and exit"
    )
    args = p.parse_args(argv)
    if args.budget is None and args.calls is None:
        args.budget = 60.0
    return args


def replay(seed: int, index: int, ops_pattern: str | None) -> None:
    import flambeau

    from .generate import generate
    from .table import select_ops

    try:
        ops = select_ops(flambeau.ops_table(), ops_pattern)
    except ValueError as e:
        sys.exit(f"flambeau_fuzz: {e}")
    print(generate(ops, seed, index).program(consume=True), end="")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.replay is not None:
        replay(args.seed, args.replay, args.ops)
        return 0
    runtime = args.sanitized
    if runtime == "auto":
        runtime = sanitizer.default_runtime()
        if not runtime:
            sys.exit("flambeau_fuzz: --sanitized: gcc has no libasan.so; pass its path")
    settings = Settings(
        seed=args.seed,
        budget=args.budget,
        calls=args.calls,
        workers=max(1, args.workers),
        timeout=args.timeout,
        memory_bytes=int(args.memory_gb * (1 << 30)),
        ops=args.ops,
        report_dir=args.report.resolve(),
        sanitized=runtime,
        threads=args.threads or max(1, (os.cpu_count() or 1) // max(1, args.workers)),
        oracle=args.oracle == "torch",
        oracle_path=args.oracle_path,
    )
    results = report.Results(args.seed)
    Runner(settings, results).run()
    shown = {k: v for k, v in vars(args).items() if k != "report"}
    summary = report.write(results, settings.report_dir, shown)
    print(f"report: {settings.report_dir}/summary.txt, summary.json, findings/")
    print(report.human(summary), end="")
    return 1 if results.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
