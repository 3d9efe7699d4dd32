"""Every developer and CI workflow of flambeau is a nox session.

    nox -s build    wheels of every package under packages/ into dist/
    nox -s tests    every package's tests/ and tests-integration/, against those wheels
    nox -s lint     ruff and clang-format checks          (nox -s format applies them)
    nox -s docs     the Sphinx site into docs/_build/html, then its doctests
    nox -s bench    packages/*/benchmarks/bench_*.py beside NumPy and PyTorch
    nox -s demo     packages/*/examples/demo*.py
    nox -s install  chosen packages (and their flambeau siblings) into your own Python:
                    `nox -s install -- nn optim [--python PATH]` (default: python3 on PATH)
    nox -s editable the editable install of the core CONTRIBUTING.md gives (not in `tests`)
    nox -s conformance  tests-conformance/: autograd against PyTorch (optional, not in `tests`)
    nox -s coverage torch's public names flambeau has and lacks, per namespace (optional)
    nox -s thirdparty   libraries written for PyTorch (GPyTorch, ...) run their own tests
                    on flambeau: tests-thirdparty/suites.toml
    nox -s fuzz     schema-driven fuzzing of every operator in child processes (CI: 3 minutes)
    nox -s sanitize the core built with ASan+UBSan: its tests, then a fuzz run (not in CI)

Packages are found by scanning packages/*/pyproject.toml, so a new package needs
no change here. Sessions that need wheels require `build`, which runs once per
nox invocation in its own venv (one persistent CMake tree) and skips any package
whose wheel is newer than all its sources.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import nox
from nox.command import CommandFailed
from packaging.requirements import Requirement
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

try:
    import tomllib
except ImportError:  # Python 3.10; nox itself depends on tomli there
    import tomli as tomllib

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"  # what reuse_existing_virtualenvs = True sets
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).parent.resolve()
DIST = ROOT / "dist"
CORE = ROOT / "packages" / "tensor-core"


def _device_toolkit(pkg: Path) -> str | None:
    """The compiler a device plugin needs to build (`[tool.flambeau] build-needs`)."""
    project = tomllib.loads((pkg / "pyproject.toml").read_text())
    return project.get("tool", {}).get("flambeau", {}).get("build-needs")


_ALL = sorted(ROOT.glob("packages/*/pyproject.toml"))
# Core first: plugins build against its headers, and its demo opens the tour.
PACKAGES = sorted(
    (p.parent for p in _ALL if not _device_toolkit(p.parent)), key=lambda p: (p != CORE, p.name)
)
# Device plugins (tensor-cuda) need a device toolkit (nvcc) to build, so they are not
# among the wheels every session installs: their own tests build and load them apart
# from the other packages, and skip, saying why, where the toolkit is missing. Packages
# still being built, with no pyproject.toml yet, get their tests run the same way.
COMPONENT_SUITES = sorted(
    p / "tests"
    for p in ROOT.glob("packages/*")
    if (p / "tests").is_dir() and (not (p / "pyproject.toml").exists() or _device_toolkit(p))
)

# Pinned so that every machine formats alike.
RUFF = "ruff==0.17.6"
CLANG_FORMAT = "clang-format==23.1.5"
TORCH = "torch==2.13.0"
# SciPy is the reference for special functions numpy lacks (erfinv, digamma, ...).
# scikit-learn: its bundled digits data set for the end-to-end training tests.
# The runtime wheels a device plugin depends on (NVIDIA's, for tensor-cuda), as its own
# pyproject.toml names them: its tests build the plugin against their headers and load
# its runtime (no GPU needed: it then reports none). Linux x86-64 wheels only.
DEVICE_RUNTIME_DEPS = sorted(
    f"{dep}; sys_platform == 'linux' and platform_machine == 'x86_64'"
    for p in ROOT.glob("packages/*")
    if (p / "pyproject.toml").exists() and _device_toolkit(p)
    for dep in tomllib.loads((p / "pyproject.toml").read_text())["project"]["dependencies"]
    if dep.startswith("nvidia-")
)
# Suites of independent tests, long enough that one worker process per core
# (pytest-xdist) repays its start-up; CI has two cores. The others stay in one process:
# short ones, and those that build something once per session (the CUDA plugin, the C++
# extensions). Tests a module fixture builds for are kept on one worker by an
# `xdist_group` mark (--dist loadgroup). Their OpenMP threads sleep when idle instead of
# spinning (OMP_WAIT_POLICY=passive): two processes' spinning threads on two cores made
# the programs' suite slower in parallel (564 s) than alone (342 s); passive, two
# programs at a time take two thirds of their time one after the other.
PARALLEL_SUITES = {"packages/tensor-core/tests", "packages/autograd/tests", "tests-integration"}
WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
TEST_DEPS = [
    "pytest", "hypothesis", "numpy", "scipy", "psutil", "scikit-learn", "safetensors",
    "pytest-xdist",  # PARALLEL_SUITES
    # tensor-cuda (COMPONENT_SUITES): its allocator's test harness and the plugin's build.
    "pybind11", "scikit-build-core", "cmake", "ninja", *DEVICE_RUNTIME_DEPS,
    "pyyaml",  # tensor-core's tests/test_kernel_table.py reads the kernel table
    "tensorboard", "pillow",  # flambeau.utils.tensorboard's tests/test_tensorboard*.py
]  # fmt: skip
# Build backends ask for these dynamically (scikit-build-core: cmake, ninja; setuptools
# before 70.1: wheel), a step that --no-build-isolation skips.
BUILD_TOOLS = ["cmake", "ninja", "wheel"]
# Not part of a wheel, so editing them needs no rebuild.
NOT_IN_WHEEL = {"build", "dist", "tests", "benchmarks", "examples"}
CPP_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}
SKIP_DIRS = {".git", ".nox", ".venv", "build", "dist", "_build", "__pycache__", "node_modules"}


def _project(pkg: Path) -> dict:
    return tomllib.loads((pkg / "pyproject.toml").read_text())


def _dist_name(pkg: Path) -> str:
    return canonicalize_name(_project(pkg)["project"]["name"])


def _wheels(pkg: Path) -> list[Path]:
    """pkg's wheels in dist/ that this interpreter can install, newest last."""
    name, supported = _dist_name(pkg), set(sys_tags())
    found = []
    for whl in DIST.glob("*.whl"):
        wname, _, _, tags = parse_wheel_filename(whl.name)
        if wname == name and tags & supported:
            found.append(whl)
    return sorted(found, key=lambda w: w.stat().st_mtime)


def _newest_source(pkg: Path) -> float:
    newest = 0.0
    for dirpath, dirnames, filenames in os.walk(pkg):
        top = dirpath == str(pkg)
        dirnames[:] = [
            d
            for d in dirnames
            if not (top and d in NOT_IN_WHEEL)
            and d != "__pycache__"
            and not d.startswith(".")
            and not d.endswith(".egg-info")
        ]
        for f in filenames:
            newest = max(newest, os.stat(os.path.join(dirpath, f)).st_mtime)
    return newest


def _is_fresh(pkg: Path) -> bool:
    wheels = _wheels(pkg)
    if not wheels:
        return False
    version = _project(pkg)["project"].get("version")  # None when dynamic
    _, wheel_version, _, _ = parse_wheel_filename(wheels[-1].name)
    if version is not None and str(wheel_version) != version:
        return False
    return wheels[-1].stat().st_mtime > _newest_source(pkg)


def _build_requires(pkg: Path) -> list[Requirement]:
    return [Requirement(r) for r in _project(pkg).get("build-system", {}).get("requires", [])]


def install_wheels(session: nox.Session, *extra: str) -> None:
    """Install every package's wheel from dist/ (and their dependencies) plus `extra`."""
    if missing := [pkg.name for pkg in PACKAGES if not _wheels(pkg)]:
        session.error(f"no wheel in dist/ for {', '.join(missing)}: run `nox -s build`")
    wheels = [str(_wheels(pkg)[-1]) for pkg in PACKAGES]
    session.install(*extra, *wheels)
    # A rebuilt wheel keeps its version, and pip keeps an installed version.
    session.install("--no-deps", "--force-reinstall", *wheels)


@nox.session
def build(session: nox.Session) -> None:
    """Build a wheel of every package into dist/, skipping those already up to date."""
    stale = [pkg for pkg in PACKAGES if not _is_fresh(pkg)]
    for pkg in PACKAGES:
        if pkg not in stale:
            session.log(f"{pkg.name}: {_wheels(pkg)[-1].name} is up to date")
    if not stale:
        return
    siblings = {_dist_name(p): p for p in PACKAGES}
    third_party = {
        str(r)
        for pkg in stale
        for r in _build_requires(pkg)
        if canonicalize_name(r.name) not in siblings
    }
    # Build isolation would download the build deps into a new env on every build.
    session.install(*BUILD_TOOLS, *sorted(third_party))
    DIST.mkdir(exist_ok=True)
    for pkg in stale:
        for r in _build_requires(pkg):  # a sibling needed at build time, e.g. the core's headers
            if sibling := siblings.get(canonicalize_name(r.name)):
                session.install("--no-deps", "--force-reinstall", str(_wheels(sibling)[-1]))
        for old in _wheels(pkg):  # keep one wheel per package in dist/
            old.unlink()
        # A compiled package prints CMake's and ninja's progress ([42/281] Building CXX
        # object ...): pip shows a backend's output only with -v.
        compiled = _project(pkg)["build-system"].get("build-backend", "").startswith("scikit")
        session.run(
            "python", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            *(["-v"] if compiled else []), "-w", str(DIST), str(pkg),
        )  # fmt: skip


# The Python `install` installs into unless told otherwise: the python3 first on PATH
# when nox started (an activated virtual environment's), read before any session runs.
USER_PYTHON = shutil.which("python3") or shutil.which("python")


def _flambeau_needs(pkg: Path, by_name: dict[str, Path]) -> list[Path]:
    """The flambeau packages `pkg` depends on (transitively), then `pkg` itself."""
    found: list[Path] = []
    for dep in _project(pkg)["project"].get("dependencies", []):
        sibling = by_name.get(canonicalize_name(Requirement(dep).name))
        if sibling is not None:
            found += [p for p in _flambeau_needs(sibling, by_name) if p not in found]
    return [*found, pkg]


def _chosen_packages(session: nox.Session, names: list[str]) -> list[Path]:
    """Packages named by folder (`nn`, `tensor-core`) or distribution (`flambeau-nn`)."""
    by_name = {**{p.name: p for p in PACKAGES}, **{_dist_name(p): p for p in PACKAGES}}
    unknown = [n for n in names if n not in by_name and canonicalize_name(n) not in by_name]
    if unknown:
        session.error(
            f"no package {', '.join(unknown)}; choose among {' '.join(p.name for p in PACKAGES)}"
        )
    chosen = [by_name.get(n) or by_name[canonicalize_name(n)] for n in names] or PACKAGES
    closure: list[Path] = []
    for pkg in chosen:
        closure += [p for p in _flambeau_needs(pkg, by_name) if p not in closure]
    return closure


@nox.session(venv_backend="none", requires=["build"])
def install(session: nox.Session) -> None:
    """Install chosen packages, and the flambeau packages they need, into your Python.

    `nox -s install -- nn optim` installs flambeau-nn and flambeau-optim with the core and
    autograd from the wheels in dist/ (built first when stale) into the python3 first on
    PATH, e.g. your activated virtual environment; `--python PATH` picks another one. No
    names: every package. Third-party dependencies (NumPy, ...) come from pip's index
    unless that Python already has them.
    """
    args, target = list(session.posargs), USER_PYTHON
    if "--python" in args:
        at = args.index("--python")
        if at + 1 == len(args):
            session.error("--python needs the path of a Python interpreter")
        target = args.pop(at + 1)
        args.pop(at)
    if not target:
        session.error("no python3 on PATH: name one with --python PATH")
    packages = _chosen_packages(session, args)
    wheels = [str(_wheels(pkg)[-1]) for pkg in packages]
    session.log(f"installing {' '.join(_dist_name(p) for p in packages)} into {target}")
    pip = [target, "-m", "pip", "install", "--find-links", str(DIST)]
    session.run(*pip, *wheels, external=True)
    # A rebuilt wheel keeps its version, and pip keeps an installed version.
    session.run(*pip, "--no-deps", "--force-reinstall", "--quiet", *wheels, external=True)


# Run from a temporary directory, `flambeau` must come from site-packages.
CHECK_INSTALLED = f"""
import pathlib, flambeau
where = pathlib.Path(flambeau.__file__).resolve()
assert not where.is_relative_to({str(ROOT / "packages")!r}), f"source tree imported: {{where}}"
print("testing the installed flambeau at", where.parent)
"""


def _totals(reports: list[Path]) -> dict[str, int]:
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for report in reports:
        if report.exists():
            for suite in ET.parse(report).getroot().iter("testsuite"):
                for key in totals:
                    totals[key] += int(suite.get(key, 0))
    return totals


@nox.session(requires=["build"])
def tests(session: nox.Session) -> None:
    """Run every package's tests/ and tests-integration/ against the installed wheels.

    Extra arguments go to every pytest run: `nox -s tests -- -k matrix -x`. Without
    them each suite must run a test; with them, at least one suite must.
    """
    install_wheels(session, *TEST_DEPS)
    suites = [pkg / "tests" for pkg in PACKAGES] + COMPONENT_SUITES + [ROOT / "tests-integration"]
    missing = [str(s.relative_to(ROOT)) for s in suites if not s.is_dir()]
    if missing:
        session.error(f"missing test suites: {', '.join(missing)}")
    failed, reports = [], []
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run("python", "-c", CHECK_INSTALLED)
        for suite in suites:
            name = str(suite.relative_to(ROOT))
            reports.append(Path(tmp) / (name.replace("/", "-") + ".xml"))
            workers, env = [], {}
            if name in PARALLEL_SUITES and (WORKERS or 1) > 1:
                workers = ["-n", str(WORKERS), "--dist", "loadgroup"]
                env = {"OMP_WAIT_POLICY": "passive"}
            try:  # exit code 5 (no test collected) fails like any other
                session.run(
                    "pytest", "-p", "no:cacheprovider", f"--rootdir={suite.parent}",
                    f"--junitxml={reports[-1]}", *workers,
                    str(suite), *session.posargs,
                    success_codes=[0, 5] if session.posargs else [0], env=env,
                )  # fmt: skip
            except CommandFailed:
                failed.append(name)
        t = _totals(reports)
    # One plain closing line over all suites, for people and CI alike.
    passed = t["tests"] - t["failures"] - t["errors"] - t["skipped"]
    print(f"total: {passed} passed, {t['failures'] + t['errors']} failed, {t['skipped']} skipped")
    if failed:
        session.error(f"failed or ran no test: {', '.join(failed)}")
    if t["tests"] == 0:
        session.error("no test ran")


@nox.session
def editable(session: nox.Session) -> None:
    """Check the editable install of the core that CONTRIBUTING.md gives (issue 22).

    The tests of tests-integration/test_install_matrix.py marked `editable`: a Debug
    editable build of the
    core in a virtual environment of its own, kept with its CMake tree in
    build/integration/ so that later runs compile only what changed. Apart from `tests`,
    which tests the wheels and would otherwise compile the core twice; CI runs it as a
    job of its own (ci/editable.sh). Extra arguments go to pytest.
    """
    session.install("pytest", "packaging")
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run(
            "pytest", "-p", "no:cacheprovider", f"--rootdir={ROOT}", "-m", "editable",
            "--run-editable", str(ROOT / "tests-integration" / "test_install_matrix.py"),
            *session.posargs,
        )  # fmt: skip


@nox.session(requires=["build"])
def conformance(session: nox.Session) -> None:
    """Compare flambeau's autograd with PyTorch's over the core's operator table.

    Optional and apart from `tests` (which must pass without torch); it installs torch.
    Extra arguments go to pytest: `nox -s conformance -- -k linalg -rx`.
    """
    install_wheels(session, *TEST_DEPS, TORCH)
    suite = ROOT / "tests-conformance"
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run("python", "-c", CHECK_INSTALLED)
        session.run(
            "pytest", "-p", "no:cacheprovider", f"--rootdir={ROOT}", str(suite), *session.posargs
        )


@nox.session(requires=["build"])
def coverage(session: nox.Session) -> None:
    """Print, per namespace, torch's public names that flambeau has and lacks (issue 13).

    Optional, like `conformance`: it installs torch. Deliberate omissions and names other
    issues build are in shared/flambeau_coverage/omissions.toml. Extra arguments go to
    the tool: `nox -s coverage -- --missing --only fft`, `-- --write-present`.
    """
    install_wheels(session, TORCH)
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run("python", "-c", CHECK_INSTALLED)
        session.run("python", "-m", "flambeau_coverage", *session.posargs, env=FUZZ_ENV)


THIRDPARTY = ROOT / "tests-thirdparty"


def _thirdparty_source(session: nox.Session, name: str, version: str) -> Path:
    """The unpacked source distribution of name==version, downloaded once into
    build/thirdparty/."""
    where = ROOT / "build" / "thirdparty"
    unpacked = where / f"{name}-{version}"
    if not unpacked.is_dir():
        where.mkdir(parents=True, exist_ok=True)
        session.run(
            "python", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            "--dest", str(where), f"{name}=={version}",
        )  # fmt: skip
        archive = where / f"{name}-{version}.tar.gz"
        if not archive.exists():
            session.error(f"pip gave no {archive.name} for {name}=={version}")
        shutil.unpack_archive(archive, where)
    return unpacked


def _torch_alias_site() -> Path:
    """A folder whose sitecustomize.py makes every Python started with it on PYTHONPATH
    (the suite's, its xdist workers', the subprocesses its tests start) answer
    ``import torch`` with flambeau."""
    site = ROOT / "build" / "thirdparty" / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text("import flambeau_testing.torch_alias  # noqa: F401\n")
    return site


@nox.session(requires=["build"])
def thirdparty(session: nox.Session) -> None:
    """Run the test suites of libraries written against PyTorch on flambeau.

    tests-thirdparty/suites.toml names them (pinned versions, their test needs, and each
    known failure with its reason, deselected); ``import torch`` is answered by flambeau
    (flambeau_testing.torch_alias, from a sitecustomize), and torch is not installed.
    Name libraries to run only those (`nox -s thirdparty -- gpytorch`); pytest arguments
    follow `--` (`-- gpytorch -- -x`).
    """
    suites = tomllib.loads((THIRDPARTY / "suites.toml").read_text())
    chosen, pytest_args = session.posargs, []
    if "--" in chosen:
        at = chosen.index("--")
        chosen, pytest_args = chosen[:at], chosen[at + 1 :]
    if unknown := set(chosen) - set(suites):
        session.error(f"not in tests-thirdparty/suites.toml: {sorted(unknown)}")
    names = chosen or list(suites)
    deps = sorted({d for n in names for d in suites[n].get("deps", [])})
    install_wheels(session, "pytest", "pytest-xdist", *deps)
    failed = []
    for name in names:
        suite = suites[name]
        keys = {"version", "tests", "deps", "with", "env", "args", "workers", "known_failures"}
        if bad := set(suite) - keys:
            session.error(f"{name}: unknown keys {sorted(bad)} in suites.toml")
        source = _thirdparty_source(session, name, suite["version"])
        path = [str(_torch_alias_site()), str(ROOT / "shared"), str(source)] + [
            str(_thirdparty_source(session, w, suites[w]["version"])) for w in suite.get("with", [])
        ]
        env = {
            "PYTHONPATH": os.pathsep.join(path),
            "OMP_WAIT_POLICY": "passive",
            **suite.get("env", {}),
        }
        deselect = [a for test in suite.get("known_failures", {}) for a in ("--deselect", test)]
        n = suite.get("workers", WORKERS or 1)
        workers = ["-n", str(n)] if n > 1 else []
        with session.chdir(source):
            try:
                session.run(
                    "pytest", "-p", "no:cacheprovider", "-q", "-W", "ignore", *workers,
                    *suite.get("args", []), *deselect, suite["tests"], *pytest_args, env=env,
                )  # fmt: skip
            except CommandFailed:
                failed.append(name)
    if failed:
        session.error(f"third-party suites with failures: {', '.join(failed)}")


def _clang_format(session: nox.Session, *args: str) -> None:
    """Run clang-format over every C++ file of the repo (outside build trees)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        found += [os.path.join(dirpath, f) for f in filenames if Path(f).suffix in CPP_SUFFIXES]
    if not found:
        return
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as listing:
        listing.write("\n".join(sorted(found)))
        listing.flush()
        session.run("clang-format", *args, f"--files={listing.name}", silent=True)


@nox.session
def lint(session: nox.Session) -> None:
    """Check Python with ruff and C++ with clang-format; changes nothing."""
    session.install(RUFF, CLANG_FORMAT)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    _clang_format(session, "--dry-run", "--Werror")


@nox.session(name="format")
def format_(session: nox.Session) -> None:
    """Apply ruff (import order and formatting) and clang-format in place."""
    session.install(RUFF, CLANG_FORMAT)
    session.run("ruff", "check", "--select", "I", "--fix", ".")
    session.run("ruff", "format", ".")
    _clang_format(session, "-i")


@nox.session(requires=["build"])
def docs(session: nox.Session) -> None:
    """Build the Sphinx site, then run its examples as doctests; any warning fails.

    Autodoc reads the installed wheels. The doctests (guides and API pages) train small
    models and start processes: about a minute.
    """
    install_wheels(session, "sphinx", "furo", "numpy", "safetensors", "tensorboard", "pillow")
    # -E: the API pages come from the installed wheels, which Sphinx does not track.
    # -j auto: one reader process per core (every extension of docs/_ext is parallel-safe);
    # on two cores the html build takes 50 s instead of 80 s.
    build = ["sphinx-build", "-W", "--keep-going", "-E", "-j", "auto"]
    session.run(*build, "-b", "html", "docs", "docs/_build/html")
    session.run(*build, "-b", "doctest", "docs", "docs/_build/doctest")


# Scripts with GEMM-bound rows (sgemm, conv, Linear, MLP/CNN steps, LSTM/GRU): `bench` runs
# them a second time, only those rows (FLAMBEAU_BENCH_ONLY=gemm), with the OpenBLAS
# variables below removed. Those variables (OPENBLAS_CORETYPE=Haswell and an L2 size, a
# workaround some hosts set) halve OpenBLAS's GEMM on AVX-512 machines, and OpenBLAS reads
# them only when it loads: hence a process of its own.
GEMM_BENCHES = ("bench_linalg.py", "bench_nn_conv.py", "bench_nn.py")
OPENBLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@nox.session(requires=["build"])
def bench(session: nox.Session) -> None:
    """Run every packages/*/benchmarks/bench_*.py; each prints a table of ratios.

    Every table also goes into build/bench/<UTC timestamp>.json (FLAMBEAU_BENCH_JSON; the
    format is in shared/flambeau_bench), with the machine's facts: CPU, flags, threads,
    versions, the OpenBLAS core in use. When OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE is set,
    the GEMM-bound rows run again without them, titled "[OpenBLAS env unset]".
    """
    install_wheels(session, "numpy")
    try:
        session.install(TORCH)
    except CommandFailed:
        session.warn(f"{TORCH} could not be installed: torch columns show n/a")
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    results = ROOT / "build" / "bench" / f"{stamp}.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    env = {
        "PYTHONPATH": str(ROOT / "shared"),  # the shared harness, flambeau_bench
        "FLAMBEAU_BENCH_JSON": str(results),
    }
    scripts = [s for pkg in PACKAGES for s in sorted(pkg.glob("benchmarks/bench_*.py"))]
    try:
        for script in scripts:
            session.run("python", str(script), env=env)
        if set_vars := [f"{k}={os.environ[k]}" for k in OPENBLAS_ENV if k in os.environ]:
            session.log(f"GEMM-bound rows again without {' '.join(set_vars)}")
            unset = {
                **env,
                **dict.fromkeys(OPENBLAS_ENV),  # None: nox removes the variable
                "FLAMBEAU_BENCH_ONLY": "gemm",
                "FLAMBEAU_BENCH_TAG": "[OpenBLAS env unset]",
            }
            for script in (s for s in scripts if s.name in GEMM_BENCHES):
                session.run("python", str(script), env=unset)
        else:
            session.log("OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset: GEMM rows ran once")
    finally:
        session.log(f"results of this run: {results}")


@nox.session(requires=["build"])
def demo(session: nox.Session) -> None:
    """Run every packages/*/examples/demo*.py: a short tour of flambeau (and a training run)."""
    # The digits training demo reads scikit-learn's bundled data set and plots with matplotlib.
    install_wheels(session, "numpy", "scikit-learn", "matplotlib")
    demos = [d for pkg in PACKAGES for d in sorted(pkg.glob("examples/demo*.py"))]
    if not demos:
        session.error("no packages/*/examples/demo*.py found")
    for script in demos:
        session.run("python", str(script))


# Shared by `coverage`, `fuzz` and `sanitize`: the tools are helper packages in shared/;
# the fuzzer's reports (summary, reproducers, sanitizer logs) go under build/ (ignored).
FUZZ_ENV = {"PYTHONPATH": str(ROOT / "shared")}
FUZZ_DEFAULTS = ["--seed", "0"]  # fixed: a CI failure must reproduce; --seed N explores


@nox.session(requires=["build"])
def fuzz(session: nox.Session) -> None:
    """Fuzz every operator of the table with schema-driven arguments (python -m flambeau_fuzz).

    Calls run in worker processes; a crash, hang, sanitizer report or unclean exception
    fails the session, with a reproducer per finding in build/fuzz/. Extra arguments go to
    the fuzzer: `nox -s fuzz -- --budget 600 --seed 7 --ops 'linalg_.*'`.
    """
    install_wheels(session)
    report = ROOT / "build" / "fuzz"
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run("python", "-c", CHECK_INSTALLED)
        session.run(
            "python", "-m", "flambeau_fuzz", *FUZZ_DEFAULTS, "--report", str(report),
            *session.posargs, env=FUZZ_ENV,
        )  # fmt: skip


SANITIZE_BUILD = CORE / "build" / "sanitize"
# -O1 keeps the stack traces readable and ASan fast enough; vptr checks trip over
# pybind11's casts; LTO is off (pybind11 would add it) because it defeats instrumentation.
SANITIZE_CFLAGS = "-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer"
SANITIZE_BUILD_ARGS = [
    f"-Cbuild-dir={SANITIZE_BUILD}",
    "-Ccmake.build-type=RelWithDebInfo",
    "-Ccmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g",
    f"-Ccmake.define.CMAKE_CXX_FLAGS={SANITIZE_CFLAGS}",
    "-Ccmake.define.CMAKE_MODULE_LINKER_FLAGS=-fsanitize=address,undefined",
    "-Ccmake.define.CMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF",
    "-Cinstall.strip=false",  # keep the symbols the sanitizers' stack traces name
]


def _asan_runtime() -> str:
    """gcc's libasan.so: Python itself is not instrumented, so it must be preloaded."""
    found = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True)
    path = found.stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else ""


@nox.session
def sanitize(session: nox.Session) -> None:
    """Build the core with AddressSanitizer and UBSan, run its tests, then fuzz it.

    The instrumented build lives in packages/tensor-core/build/sanitize (incremental) and
    is installed into this session's venv only. Extra arguments go to the fuzzer:
    `nox -s sanitize -- --budget 600`. Slow (a full compile the first time): not in CI.
    """
    core_deps = [str(r) for r in _build_requires(CORE)]
    session.install(*BUILD_TOOLS, *core_deps, *_project(CORE)["project"]["dependencies"])
    session.install(*TEST_DEPS)
    session.install(
        "--no-build-isolation", "--no-deps", "--force-reinstall", *SANITIZE_BUILD_ARGS, str(CORE)
    )
    # The core's tests use its siblings (autograd, nn) when installed; they are pure Python.
    siblings = [pkg for pkg in PACKAGES if pkg != CORE]
    names = {_dist_name(pkg) for pkg in PACKAGES}
    if tools := {
        str(r)
        for pkg in siblings
        for r in _build_requires(pkg)
        if canonicalize_name(r.name) not in names
    }:
        session.install(*sorted(tools))
    session.install(
        "--no-build-isolation", "--no-deps", "--force-reinstall", *[str(p) for p in siblings]
    )
    runtime = _asan_runtime()
    if not runtime:
        session.error("gcc has no libasan.so: install gcc's AddressSanitizer runtime")
    # Leaks: Python never frees everything. The block cache would hide use-after-free
    # of large blocks from ASan, so it is off. UBSan reports and goes on (it writes to
    # stderr whatever log_path says): the tests' output is searched for its reports.
    env = {
        "LD_PRELOAD": runtime,
        "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:abort_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=0",
        "FLAMBEAU_CPU_CACHE_MB": "0",
        # For tests that cannot run under ASan (an RLIMIT_AS in a subprocess starves its
        # shadow memory) to skip themselves.
        "FLAMBEAU_SANITIZED": "1",
    }
    (ROOT / "build").mkdir(exist_ok=True)
    tests_log = ROOT / "build" / "sanitize-tests.log"
    failed = []
    with tempfile.TemporaryDirectory() as tmp, session.chdir(tmp):
        session.run("python", "-c", CHECK_INSTALLED, env=env)
        session.log(f"the core's tests under ASan and UBSan; output in {tests_log}")
        with open(tests_log, "w") as log:
            try:  # --capture=sys: the sanitizers write to file descriptor 2, into the log
                session.run(
                    "pytest", "-p", "no:cacheprovider", "--capture=sys", f"--rootdir={CORE}",
                    str(CORE / "tests"), env=env, stdout=log,
                )  # fmt: skip
            except CommandFailed:
                failed.append(f"the core's tests (see {tests_log})")
        output = tests_log.read_text(errors="replace")
        print("\n".join(output.rstrip().splitlines()[-3:]))
        if "AddressSanitizer: " in output:  # a subprocess's report may be cut to its SUMMARY
            report = output[output.index("AddressSanitizer: ") :]
            print("\n".join(report.splitlines()[:40]))
            failed.append("an AddressSanitizer report in the tests")
        ubsan = sorted(set(re.findall(r"\S+:\d+:\d+: runtime error: [^\n]*", output)))
        if ubsan:
            print("\n".join(ubsan))
            failed.append(f"{len(ubsan)} UBSan reports in the tests")
        try:
            session.run(
                # Calls run about 3x slower under the sanitizers: a longer wait before a hang.
                "python", "-m", "flambeau_fuzz", *FUZZ_DEFAULTS, "--sanitized", runtime,
                "--timeout", "60", "--report", str(ROOT / "build" / "sanitize-fuzz"),
                *session.posargs, env={**FUZZ_ENV, "FLAMBEAU_CPU_CACHE_MB": "0"},
            )  # fmt: skip
        except CommandFailed:
            failed.append("the fuzz run (see build/sanitize-fuzz/summary.txt)")
    if failed:
        session.error("sanitize: " + "; ".join(failed))
