"""What the integration tests share: the wheels `nox -s build` put in dist/ (built
once per run; tests only install them), fresh virtual environments, and commands
run in those environments without leaking the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
CORE = "flambeau-tensor-core"

# The test's own environment must not leak into the ones it creates.
ENV = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}


def run(
    *cmd: str | Path, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env={**ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def make_venv(path: Path, *, with_pip: bool = True) -> Path:
    """A new virtual environment at path; its interpreter. Without pip it takes ~50 ms
    instead of ~4 s: install into it with `pip_install`."""
    run(sys.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), path)
    return path / "bin" / "python"


def pip_install(python: Path, *args: str | Path) -> str:
    """`pip install args` into the environment of `python`, by this interpreter's pip."""
    return run(sys.executable, "-m", "pip", "--python", python, "install", *args)


def newest_wheels() -> dict[str, Path]:
    """The newest installable wheel of each distribution in dist/, by distribution name."""
    supported, found = set(sys_tags()), {}
    for whl in sorted(DIST.glob("*.whl"), key=lambda w: w.stat().st_mtime):
        name, _, _, tags = parse_wheel_filename(whl.name)
        if tags & supported:
            found[canonicalize_name(name)] = whl
    return found
