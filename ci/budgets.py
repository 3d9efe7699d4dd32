"""Checks the wheels in dist/ against size budgets and the import times against theirs.

Run by ci/budgets.sh after `nox -s build`. Import times are measured in a fresh virtual
environment with every wheel installed, as the best of five runs of
`python -X importtime -c "import <module>"` (cumulative microseconds of the module).
Budgets can be raised per run with BUDGET_<NAME> environment variables, in MiB or ms.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

DIST = Path(__file__).resolve().parents[1] / "dist"
# MiB per wheel (prefix of the file name) and ms per import, on a 2-core CI machine.
WHEEL_MIB = {"flambeau_tensor_core": 12.0, "flambeau_": 1.0}
IMPORT_MS = {"flambeau": 60, "flambeau.nn": 100, "flambeau.optim": 100}


def budget(kind: str, name: str, default: float) -> float:
    key = f"BUDGET_{kind}_{name.upper().replace('.', '_')}"
    return float(os.environ.get(key, default))


def wheel_failures() -> list[str]:
    failures = []
    for wheel in sorted(DIST.glob("*.whl")):
        prefix = next(p for p in WHEEL_MIB if wheel.name.startswith(p))
        size = wheel.stat().st_size / 2**20
        limit = budget("WHEEL", prefix.rstrip("_"), WHEEL_MIB[prefix])
        print(f"{wheel.name}: {size:.2f} MiB (budget {limit})")
        if size > limit:
            failures.append(f"{wheel.name} is {size:.2f} MiB, over {limit}")
    return failures


def import_ms(python: Path, module: str) -> float:
    runs = []
    for _ in range(5):
        err = subprocess.run(
            [python, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
        ).stderr  # fmt: skip
        line = next(ln for ln in err.splitlines() if ln.rstrip().endswith(f"| {module}"))
        runs.append(int(line.split("|")[1]) / 1000)
    return min(runs)


def import_failures() -> list[str]:
    with tempfile.TemporaryDirectory() as env:
        venv.create(env, with_pip=True)
        python = Path(env) / "bin" / "python"
        wheels = [str(w) for w in DIST.glob("*.whl")]
        subprocess.run([python, "-m", "pip", "install", "-q", "--find-links", DIST, *wheels],
                       check=True)  # fmt: skip
        failures = []
        for module, default in IMPORT_MS.items():
            took, limit = import_ms(python, module), budget("IMPORT", module, default)
            print(f"import {module}: {took:.0f} ms (budget {limit:.0f})")
            if took > limit:
                failures.append(f"import {module} takes {took:.0f} ms, over {limit:.0f}")
        return failures


def main() -> int:
    if not list(DIST.glob("*.whl")):
        print("no wheel in dist/: run `nox -s build` first", file=sys.stderr)
        return 2
    failures = wheel_failures() + import_failures()
    for failure in failures:
        print("over budget:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
