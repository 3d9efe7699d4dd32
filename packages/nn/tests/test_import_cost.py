"""Importing flambeau.nn stays cheap: it loads neither NumPy, nor the autograd package (the
core loads it when a tensor first requires grad, e.g. at the first Parameter), nor the
zipfile machinery of flambeau.save/load."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["numpy", "flambeau.autograd", "zipfile"])
def test_import_nn_does_not_load(module):
    code = f"import sys, flambeau.nn; print({module!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_autograd_loads_with_the_first_parameter():
    code = (
        "import sys, flambeau.nn as nn; nn.Linear(2, 2); print('flambeau.autograd' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr
