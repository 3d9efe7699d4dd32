"""Threads that make the first calls of a process together: a binding's first call
parses its schema (Python code) and the first tensor that requires grad loads the
autograd package; neither may deadlock the threads nor let one record before the
package is in. Each case runs in a fresh interpreter, under a timeout."""

import importlib.util
import subprocess
import sys
import textwrap

import pytest

CASES = {
    "factories with requires_grad": "w = F.ones(2, requires_grad=True); F.randn(3, 3)",
    "shapes and named-tuple results": "x = F.eye(3); x.shape; F.linalg.slogdet(x)",
    "record and backward": (
        "w = F.randn(8, 8, requires_grad=True)\n"
        "y = ((F.randn(4, 8) @ w).relu() * 1.5).sum()\n"
        "assert y.requires_grad, 'an operation was not recorded'\n"
        "(g,) = F.autograd.grad(y, w)"
    ),
}


WORKERS = """
import threading
import flambeau as F
errors = []
def work():
    try:
{body}
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
"""


@pytest.mark.parametrize("case", CASES)
def test_threads_making_first_calls_together(case):
    if "autograd" in CASES[case] and importlib.util.find_spec("flambeau.autograd") is None:
        pytest.skip("the autograd package is not installed")
    code = WORKERS.format(body=textwrap.indent(CASES[case], " " * 8))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
