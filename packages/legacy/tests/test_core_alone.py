"""flambeau.legacy needs the core alone: it imports and trains with autograd, nn and optim
made unimportable."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import importlib.abc, sys

BLOCKED = ("flambeau.autograd", "flambeau.nn", "flambeau.optim")

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(BLOCKED):
            raise ImportError(f"{name} is blocked for this test")
        return None

sys.meta_path.insert(0, Block())
import flambeau
import flambeau.legacy
from flambeau.legacy import nn, optim

flambeau.manual_seed(0)
model = nn.Sequential().add(nn.SpatialConvolution(1, 2, 3, 3)).add(nn.ReLU())
model.add(nn.View(2 * 4 * 4)).add(nn.Linear(32, 3)).add(nn.LogSoftMax())
crit = nn.ClassNLLCriterion()
x, y = flambeau.randn(8, 1, 6, 6), flambeau.randint(0, 3, (8,))
params, grads = model.flattenParameters()

def feval(p):
    grads.zero_()
    out = model.forward(x)
    loss = crit.forward(out, y)
    model.backward(x, crit.backward(out, y))
    return loss, grads

first = optim.sgd(feval, params, {"learningRate": 0.1})[1][0]
config = {"learningRate": 0.01}
for _ in range(30):
    last = optim.adam(feval, params, config)[1][0]
assert last < first, (first, last)
assert not any(m.startswith(BLOCKED) for m in sys.modules), sorted(sys.modules)
print("ok")
"""


def test_legacy_runs_without_autograd_nn_or_optim():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
