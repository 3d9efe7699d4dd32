"""Whole PyTorch-style programs run unchanged but for `import flambeau as torch`.

Each file in programs/ is a small training script written the way people write
them (an MNIST convnet, a word language model, a VAE, a DCGAN, nanoGPT/minGPT-style
GPTs, ...) on synthetic data; it asserts that it learned something and that its
checkpoints round-trip, and exits non-zero otherwise. This test runs each one in
a fresh interpreter. A program whose sibling subpackages (flambeau.nn, .optim,
...) are not installed is skipped; one that fails on a known gap in flambeau's
PyTorch API is a strict xfail naming the gap, so closing the gap shows up here.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))
TIMEOUT_S = 300

# Programs that stop at a piece of PyTorch's API flambeau does not have yet: the gaps, and
# the text of the errors they raise, in the order the program meets them (a failure with
# none of these texts is a real failure).
KNOWN_GAPS: dict[str, tuple[str, tuple[str, ...]]] = {}


class KnownGap(Exception):
    """A program failed on the gap KNOWN_GAPS names for it."""


def sibling_subpackages(source: str) -> set[str]:
    """The sibling subpackages (flambeau.nn, ...) a program uses; autograd always, as
    every program trains."""
    from flambeau._siblings import SIBLINGS

    used = {"flambeau.autograd"}
    imported = set()
    for names in re.findall(r"^from flambeau import ([\w, ]+)$", source, re.M):
        imported.update(f"flambeau.{n.strip()}" for n in names.split(","))
    for module in SIBLINGS:
        attribute = module.removeprefix("flambeau.")
        if module in source or f"torch.{attribute}" in source or module in imported:
            used.add(module)
    return used


PARAMS = [
    pytest.param(
        program,
        id=program.stem,
        marks=[pytest.mark.xfail(strict=True, raises=KnownGap, reason=KNOWN_GAPS[program.name][0])]
        if program.name in KNOWN_GAPS
        else [],
    )
    for program in PROGRAMS
]


@pytest.mark.parametrize("program", PARAMS)
def test_program_runs(program, tmp_path):
    for module in sorted(sibling_subpackages(program.read_text())):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            pytest.skip(f"{module} is not installed: {e}")
    proc = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    output = (proc.stdout + proc.stderr)[-4000:]
    if proc.returncode != 0 and program.name in KNOWN_GAPS:
        reason, error_texts = KNOWN_GAPS[program.name]
        if any(text in output for text in error_texts):
            raise KnownGap(reason)
    assert proc.returncode == 0, f"{program.name} exited with {proc.returncode}:\n{output}"


def test_known_gaps_name_existing_programs():
    assert set(KNOWN_GAPS) <= {p.name for p in PROGRAMS}
