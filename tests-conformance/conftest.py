"""A closing summary of what the conformance run compared and what it could not."""

import sys
from collections import Counter
from pathlib import Path

# The repository's shared test helpers (shared/flambeau_testing: the operator table) are
# imported by test modules; every suite that uses them puts shared/ on the path here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))


def pytest_terminal_summary(terminalreporter):
    module = sys.modules.get("test_autograd_vs_torch")  # absent when torch is missing
    coverage = getattr(module, "COVERAGE", None)
    if not coverage:
        return
    compared = {k: v for k, v in coverage.items() if v[0]}
    samples = sum(n for n, _, _ in compared.values())
    second = sum(s for _, s, _ in compared.values())
    rejected = Counter(why for _, _, whys in compared.values() for why in whys)
    partial = sum(1 for _, _, whys in compared.values() if whys)
    stats = terminalreporter.stats
    skipped = Counter(
        str(r.longrepr[2]).removeprefix("Skipped: ")
        for r in stats.get("skipped", [])
        if isinstance(r.longrepr, tuple)
    )
    write = terminalreporter.write_line
    terminalreporter.section("conformance coverage")
    write(
        f"compared with torch: {len(compared)} row/dtype cases, {samples} samples "
        f"({second} also second order); {len(stats.get('xfailed', []))} known differences"
    )
    write(f"samples of those rows torch does not take: {sum(rejected.values())} in {partial} rows")
    for why, n in rejected.most_common():
        write(f"  {n:4d}  {why[:100]}")
    write(f"cases not compared: {sum(skipped.values())}")
    for why, n in skipped.most_common():
        write(f"  {n:4d}  {why[:100]}")
