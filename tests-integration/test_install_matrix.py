"""Install matrix: fresh virtual environments get a subset of the wheels in dist/.

Each environment must import flambeau, compute with it, and import exactly the
sibling subpackages whose distributions it holds; a missing one raises an
ImportError that names the distribution to install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from wheelhouse import CORE, DIST, ROOT, make_venv, newest_wheels, pip_install, run

try:
    import tomllib
except ImportError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

CORE_DIR = ROOT / "packages" / "tensor-core"
# Persistent across runs, so that the editable build compiles only what changed.
CACHE = ROOT / "build" / "integration"

# Every sibling subpackage and the distribution that provides it.
SIBLINGS = {
    "flambeau.autograd": "flambeau-autograd",
    "flambeau.nn": "flambeau-nn",
    "flambeau.fx": "flambeau-nn",
    "flambeau.optim": "flambeau-optim",
    "flambeau.multiprocessing": "flambeau-mp",
    "flambeau.utils.data": "flambeau-data",
    "flambeau.legacy": "flambeau-legacy",
    "flambeau.distributed": "flambeau-distributed",
    "flambeau.distributions": "flambeau-autograd",
    "flambeau.utils.checkpoint": "flambeau-autograd",
    "flambeau.utils.cpp_extension": "flambeau-cpp-extension",
}

# Runs inside each environment; its last line of output is a JSON report.
CHECK = """
import importlib, json, sys
import flambeau
assert flambeau.ones(3).sum().item() == 3.0
errors = {}
for module in json.loads(sys.argv[1]):
    try:
        importlib.import_module(module)
        errors[module] = None
    except ImportError as e:
        errors[module] = str(e)
try:  # without flambeau-autograd nothing is recorded, and asking for a gradient says why
    flambeau.ones(2, requires_grad=True).sum().backward()
    backward = None
except Exception as e:
    backward = f"{type(e).__name__}: {e}"
print(json.dumps({"file": flambeau.__file__, "errors": errors, "backward": backward}))
"""


def check(python: Path, installed: set[str], cwd: Path) -> str:
    """Run CHECK in `python` from `cwd`; return where flambeau was imported from."""
    out = run(python, "-c", CHECK, json.dumps(list(SIBLINGS)), cwd=cwd)
    report = json.loads(out.splitlines()[-1])
    problems = []
    for module, dist in SIBLINGS.items():
        error = report["errors"][module]
        if dist in installed and error is not None:
            problems.append(f"{module} failed although {dist} is installed: {error}")
        elif dist not in installed and error is None:
            problems.append(f"{module} imported although {dist} is not installed")
        elif dist not in installed and dist not in error:
            problems.append(f"ImportError for {module} does not name {dist}: {error}")
        elif dist not in installed and "pip install ./packages/" not in error:
            problems.append(f"ImportError for {module} does not say how to install: {error}")
    backward = report["backward"]
    if "flambeau-autograd" in installed and backward is not None:
        problems.append(f"backward() failed although flambeau-autograd is installed: {backward}")
    elif "flambeau-autograd" not in installed and "flambeau-autograd" not in str(backward):
        problems.append(f"backward() without flambeau-autograd does not name it: {backward}")
    assert not problems, "\n".join(problems)
    return report["file"]


@pytest.fixture(scope="module")
def wheels() -> dict[str, Path]:
    """The newest installable wheel of each distribution in dist/."""
    found = newest_wheels()
    if CORE not in found:
        pytest.fail(f"no {CORE} wheel in {DIST}: run `nox -s build` first")
    return found


# Distributions that must install with nothing but the core and their own siblings.
ON_THE_CORE_ALONE = {"flambeau-mp": [], "flambeau-data": ["flambeau-mp"], "flambeau-legacy": [],
                     "flambeau-distributed": [], "flambeau-cpp-extension": []}  # fmt: skip


@pytest.mark.parametrize("subset", ["core-alone", *ON_THE_CORE_ALONE, "every-wheel"])
def test_wheels_install_cleanly(wheels, subset, tmp_path):
    if subset == "every-wheel":
        chosen = wheels
    elif subset == "core-alone":
        chosen = {CORE: wheels[CORE]}
    else:
        names = [CORE, subset, *ON_THE_CORE_ALONE[subset]]
        if missing := [n for n in names if n not in wheels]:
            pytest.fail(f"no {', '.join(missing)} wheel in {DIST}: run `nox -s build` first")
        chosen = {n: wheels[n] for n in names}
    python = make_venv(tmp_path / "venv", with_pip=False)
    # Our wheels by path, so that none can come from an index; their third-party
    # dependencies (numpy, ...) from the index as a user would get them.
    pip_install(python, "-q", *chosen.values())
    where = check(python, set(chosen), cwd=tmp_path)
    assert Path(where).is_relative_to(tmp_path / "venv")


def _build_requires() -> list[str]:
    project = tomllib.loads((CORE_DIR / "pyproject.toml").read_text())
    return project["build-system"]["requires"]


def _works(python: Path) -> bool:
    """Whether `python` runs and is the interpreter running this test."""
    cmd = [python, "-c", "import sys; print(sys.version)"]
    proc = python.exists() and subprocess.run(cmd, capture_output=True, text=True)
    return bool(proc) and proc.returncode == 0 and proc.stdout.strip() == sys.version


@pytest.mark.editable
def test_editable_core_alone(tmp_path):
    # The venv persists under build/ (a new one would reinstall pybind11, whose
    # fresh header timestamps would recompile everything); it is emptied of
    # flambeau first, so the core is installed alone.
    venv, python = CACHE / "editable-venv", CACHE / "editable-venv" / "bin" / "python"
    if not _works(python):
        shutil.rmtree(venv, ignore_errors=True)
        make_venv(venv)
    run(python, "-m", "pip", "install", "-q", "cmake", "ninja", "numpy", *_build_requires())
    listed = json.loads(run(python, "-m", "pip", "list", "--format=json"))
    if ours := [d["name"] for d in listed if d["name"].startswith("flambeau")]:
        run(python, "-m", "pip", "uninstall", "-y", *ours)
    # The command CONTRIBUTING.md gives, with the build tree under build/integration,
    # and a Debug build: it compiles in about half the time of Release, with asserts on.
    run(
        python, "-m", "pip", "install", "--no-build-isolation", "-e", CORE_DIR,
        "-Ceditable.rebuild=true", f"-Cbuild-dir={CACHE / 'editable-build'}",
        "-Ccmake.build-type=Debug",
        timeout=1800,
    )  # fmt: skip
    where = check(python, {CORE}, cwd=tmp_path)
    assert Path(where).is_relative_to(CORE_DIR / "src"), f"not the source tree: {where}"
