"""A program run twice, as PyTorch and as flambeau: the port must print the same."""

from __future__ import annotations

import subprocess
import sys


def assert_ports_unchanged(template: str, timeout: float = 300) -> None:
    """Runs template.format(module="torch") and template.format(module="flambeau") each in
    a fresh interpreter and asserts both succeed and print the same. Callers skip first
    when torch is not installed (pytest.importorskip("torch"))."""
    outputs = []
    for module in ("torch", "flambeau"):
        done = subprocess.run(
            [sys.executable, "-c", template.format(module=module)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{module}: {done.stderr}"
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
