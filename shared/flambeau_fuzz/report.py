"""Tallies of a run, the findings (deduplicated), and what is written at the end.

A finding is keyed by operator, outcome and exception type (a signal name or a
sanitizer's error kind for crashes): one reproducer per key, the shortest program
seen, with how many calls hit it. The report directory gets summary.json, a
human summary.txt and findings/NNN-<op>-<outcome>.py, one standalone script each.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from .outcomes import FINDINGS, OUTCOMES


@dataclass
class Finding:
    op: str
    form: str
    outcome: str
    exc: str  # exception type, signal name or sanitizer error kind
    message: str
    index: int  # the call that reproduces it: --seed S --replay INDEX
    program: str = ""
    hostile: str = ""
    where: str = ""  # the core's source line a sanitizer named
    detail: str = ""  # sanitizer report or the worker's last output
    count: int = 1

    @property
    def key(self) -> tuple:
        return (self.op, self.outcome, self.exc)


class Results:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.outcomes: Counter = Counter()
        self.per_op: dict[str, Counter] = defaultdict(Counter)
        self.findings: dict[tuple, Finding] = {}
        self.by_index: dict[int, Finding] = {}  # crashes and hangs awaiting their program
        self.skip_reasons: Counter = Counter()
        self.elapsed = 0.0
        self.ops_fuzzed = 0
        self.slow: list[tuple] = []  # (seconds, op, form, index) of the slowest calls
        self.oracle_compared = 0
        self.interrupted = False
        self.oracle_failures = 0  # torch crashed or hung: ignored

    def _record(self, finding: Finding) -> Finding:
        known = self.findings.get(finding.key)
        if known is None:
            self.findings[finding.key] = finding
            return finding
        known.count += 1
        if finding.program and (not known.program or len(finding.program) < len(known.program)):
            known.program, known.index, known.form = finding.program, finding.index, finding.form
            known.message, known.hostile = finding.message, finding.hostile
        return known

    def add(self, event: dict) -> None:
        """A call the worker finished: its outcome, and for a finding its program."""
        outcome, op = event["outcome"], event["op"]
        if "seconds" in event:
            self.slow.append((event["seconds"], op, event["form"], event["done"]))
            self.slow = sorted(self.slow, reverse=True)[:10]
        self.outcomes[outcome] += 1
        self.per_op[op][outcome] += 1
        if outcome == "skipped":
            self.skip_reasons[f"{event.get('exc')}: {event.get('msg', '')[:80]}"] += 1
        if outcome not in FINDINGS:
            return
        report = event.get("report", "")
        from . import sanitizer

        exc = sanitizer.kind(report) if outcome == "sanitizer" else event.get("exc", "")
        self._record(
            Finding(op, event["form"], outcome, exc or "report", event.get("msg", ""),
                    event["done"], event.get("program", ""), event.get("hostile", ""),
                    sanitizer.where(report), report)
        )  # fmt: skip

    def add_oracle(self, event: dict) -> None:
        """A call compared with PyTorch; a disagreement that is ours is a finding."""
        self.oracle_compared += 1
        why = event["why"]
        if why:
            self.outcomes["oracle"] += 1
            kind = " ".join(re.sub(r"\d+|\(.*", "", why.split(":")[0]).split())
            self._record(Finding(event["op"], event["form"], "oracle", kind, why,
                                 event["oracle"], event.get("program", ""),
                                 event.get("hostile", "")))  # fmt: skip

    def add_failure(self, index: int, outcome: str, exc: str, where: str, detail: str) -> None:
        """A crash or hang: the operator is known once a fresh worker describes the call."""
        self.outcomes[outcome] += 1
        self.by_index[index] = Finding("?", "?", outcome, exc, "", index, where=where,
                                       detail=detail)  # fmt: skip

    def attach(self, index: int, described: dict) -> None:
        finding = self.by_index.pop(index, None)
        if finding is None:
            return
        finding.op, finding.form = described["op"], described["form"]
        finding.program, finding.hostile = described["program"], described.get("hostile", "")
        self.per_op[finding.op][finding.outcome] += 1
        self._record(finding)

    # -- output ---------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        return sum(self.outcomes.values())

    def failed(self) -> bool:
        return any(self.outcomes[o] for o in FINDINGS) or bool(self.outcomes["oracle"])

    def ordered_findings(self) -> list[Finding]:
        rank = {o: i for i, o in enumerate((*FINDINGS, "oracle"))}
        for f in self.by_index.values():  # a program that never arrived (should not happen)
            self._record(f)
        self.by_index.clear()
        return sorted(self.findings.values(), key=lambda f: (rank[f.outcome], f.op, f.exc))

    def summary(self, settings: dict) -> dict:
        never_ok = sorted(op for op, c in self.per_op.items() if not c["ok"])
        return {
            "settings": settings,
            "calls": self.calls,
            "interrupted": self.interrupted,
            "elapsed_s": round(self.elapsed, 1),
            "calls_per_second": round(self.calls / self.elapsed, 1) if self.elapsed else None,
            "outcomes": {o: self.outcomes[o] for o in OUTCOMES},
            "oracle": {
                "compared": self.oracle_compared,
                "disagreements": self.outcomes["oracle"],
                "torch_crashed_or_hung": self.oracle_failures,
            },  # fmt: skip
            "ops_fuzzed": self.ops_fuzzed,
            "ops_called": len(self.per_op),
            "ops_never_ok": never_ok,
            "skip_reasons": dict(self.skip_reasons.most_common(20)),
            "slowest_calls": [
                {"seconds": t, "op": op, "form": form, "index": i} for t, op, form, i in self.slow
            ],
            "per_op": {op: dict(c) for op, c in sorted(self.per_op.items())},
            "findings": [
                {k: v for k, v in asdict(f).items() if k not in ("program", "detail")}
                for f in self.ordered_findings()
            ],
        }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", text).strip("_")[:60]


def reproducer(finding: Finding, seed: int) -> str:
    header = [
        f"# flambeau_fuzz finding: {finding.op} ({finding.form}) -> {finding.outcome}: "
        f"{finding.exc}",
        f"# seen {finding.count}x; this call: python -m flambeau_fuzz --seed {seed} "
        f"--replay {finding.index}",
    ]
    if finding.message:
        header.append(f"# message: {finding.message}")
    if finding.where:
        header.append(f"# sanitizer points at: {finding.where}")
    if finding.hostile:
        header.append(f"# wrong-typed argument on purpose: {finding.hostile}")
    body = finding.program or "# (the call's source could not be regenerated)\n"
    detail = ""
    if finding.detail:
        lines = finding.detail.strip().splitlines()[:60]
        detail = '\n"""\nWhat the worker printed (sanitizer report or traceback):\n' + \
            "\n".join(lines).replace('"""', "'''") + '\n"""\n'  # fmt: skip
    return "\n".join(header) + "\n" + body + detail


def write(results: Results, report_dir: Path, settings: dict) -> dict:
    """summary.json, summary.txt and findings/*.py under report_dir; returns the summary."""
    report_dir.mkdir(parents=True, exist_ok=True)
    findings_dir = report_dir / "findings"
    if findings_dir.exists():  # ours alone: a previous run's reproducers would mislead
        shutil.rmtree(findings_dir)
    findings_dir.mkdir()
    summary = results.summary(settings)
    for i, f in enumerate(results.ordered_findings()):
        name = f"{i:03d}-{_slug(f.op)}-{f.outcome}-{_slug(f.exc)}.py"
        (findings_dir / name).write_text(reproducer(f, results.seed))
        summary["findings"][i]["reproducer"] = str(findings_dir / name)
    (report_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (report_dir / "summary.txt").write_text(human(summary) + per_op_table(summary))
    return summary


def per_op_table(summary: dict) -> str:
    """Outcome counts of every operator called, worst first: for summary.txt."""
    columns = [o for o in OUTCOMES]
    rows = sorted(
        summary["per_op"].items(),
        key=lambda kv: (-sum(kv[1].get(o, 0) for o in FINDINGS), kv[1].get("ok", 0), kv[0]),
    )
    width = max((len(op) for op, _ in rows), default=2)
    lines = [
        "",
        "per operator:",
        f"  {'operator':<{width}}  " + " ".join(f"{c:>9}" for c in columns),
    ]
    for op, counts in rows:
        lines.append(f"  {op:<{width}}  " + " ".join(f"{counts.get(c, 0):>9}" for c in columns))
    return "\n".join(lines) + "\n"


def human(summary: dict) -> str:
    o = summary["outcomes"]
    lines = [
        f"flambeau_fuzz: {summary['calls']} calls in {summary['elapsed_s']} s "
        f"({summary['calls_per_second']} calls/s), seed {summary['settings'].get('seed')}, "
        f"{summary['ops_called']}/{summary['ops_fuzzed']} operators called",
        "  " + "  ".join(f"{k}: {o[k]}" for k in OUTCOMES),
        *(
            [
                f"  compared with torch: {summary['oracle']['compared']}, disagreements: "
                f"{summary['oracle']['disagreements']}"
            ]
            if summary["oracle"]["compared"]
            else []
        ),
        f"  operators never returning normally: {len(summary['ops_never_ok'])}",
    ]
    findings = summary["findings"]
    if findings:
        width = max(len(f["op"]) for f in findings)
        lines.append(f"findings ({len(findings)}, deduplicated by operator, outcome, type):")
        for f in findings:
            msg = f["where"] or f["message"]
            lines.append(
                f"  {f['op']:<{width}}  {f['outcome']:<9} {f['exc']:<28} x{f['count']:<4} "
                f"{msg[:90]}"
            )
            if "reproducer" in f:
                lines.append(f"  {'':<{width}}  -> {f['reproducer']}")
    else:
        lines.append("no findings")
    by_line: dict[str, list] = defaultdict(list)
    for f in findings:
        if f["where"]:
            by_line[f["where"]].append(f["op"])
    if by_line:
        lines.append("sanitizer reports by source line (fix these, then re-run):")
        for where, ops in sorted(by_line.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {where}: {', '.join(sorted(set(ops)))}")
    # The plain closing line CI logs are read for: a call with a finding has failed.
    failed = sum(o[k] for k in FINDINGS) + summary["oracle"]["disagreements"]
    lines.append(f"fuzz: {summary['calls'] - failed} passed, {failed} failed")
    return "\n".join(lines) + "\n"
