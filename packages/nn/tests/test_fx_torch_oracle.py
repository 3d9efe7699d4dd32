"""flambeau.fx records what torch.fx records: for the same models, the same nodes (op,
name, target, arguments) and the same generated code up to the library's name.

Needs PyTorch: importable here, or in the Python that FLAMBEAU_TORCH_PYTHON names
(``FLAMBEAU_TORCH_PYTHON=/path/to/python-with-torch pytest ...``); skipped otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import textwrap

import pytest

# Each model is written once, for `torch` being either library.
MODELS = {
    "mlp": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = torch.nn.Linear(4, 8)
                self.act = torch.nn.ReLU()
                self.fc2 = torch.nn.Linear(8, 2)
            def forward(self, x):
                return self.fc2(self.act(self.fc1(x)))
        ROOT = Model()
    """,
    "tensor_methods": """
        def ROOT(x):
            b = x.size(0)
            y = x.permute(0, 2, 1).flatten(1)
            a, c = y.chunk(2, dim=1)
            z = a[:, 1:3] * c[..., -2:]
            w = x.reshape(b, -1)[None, :, ::2]
            return z.sum(dim=1, keepdim=True) + w.mean() + x.shape[1]
    """,
    "functions_and_operators": """
        def ROOT(x, y):
            s = torch.softmax(x, dim=1)
            c = torch.cat([s, y], dim=0)
            st = torch.stack((x, y))
            r = 2 - torch.relu(c) / 4 + (-x).abs().sum() ** 2
            m = (x @ y.t()) > 0
            return r, st, torch.where(m, x, y), ~m, x // 2 % 3, torch.add(x, y, alpha=2)
    """,
    "tensor_on_the_left": """
        C = torch.tensor([1.0, 2.0])
        def ROOT(x):
            return C + x, C - x, C * x, C / x, C % x, C ** x, C @ x, 2 * x, 1 - x
    """,
    "containers_params_buffers": """
        class Inner(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 3)
            def forward(self, x):
                return self.fc(x).sigmoid()
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
                self.layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(2)])
                self.scale = torch.nn.Parameter(torch.ones(3))
                self.register_buffer("shift", torch.zeros(3))
            def forward(self, x):
                x = self.seq(self.inner(x))
                for layer in self.layers:
                    x = torch.relu(layer(x))
                return x * self.scale + self.shift
        ROOT = Model()
    """,
    "sequential_root": """
        ROOT = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                                   torch.nn.ReLU(), torch.nn.Flatten())
    """,
    "concrete_args": """
        def ROOT(x, double, scale=3.0):
            return x * 2 * scale if double else x * scale
        CONCRETE = {"double": True}
    """,
    "functional": """
        import torch.nn.functional as F
        def ROOT(x):
            return F.softmax(F.relu(x), dim=-1)
    """,
}

# Runs with `lib` bound to torch or flambeau; prints the structures as JSON.
DESCRIBE = """
import json, textwrap
def describe(lib, sources):
    fx = lib.fx
    out = {}
    for key, src in sources.items():
        scope = {"torch": lib}
        src = textwrap.dedent(src).replace("import torch.", "import %s." % lib.__name__)
        exec(src, scope)
        gm = fx.symbolic_trace(scope["ROOT"], concrete_args=scope.get("CONCRETE"))
        def arg(a):
            if isinstance(a, fx.Node):
                return "%" + a.name
            if isinstance(a, (list, tuple)):
                return [type(a).__name__[:5]] + [arg(v) for v in a]
            if isinstance(a, dict):
                return {k: arg(v) for k, v in a.items()}
            if isinstance(a, slice):
                return ["slice", arg(a.start), arg(a.stop), arg(a.step)]
            return repr(a).replace(lib.__name__ + ".", "LIB.")
        nodes = []
        for n in gm.graph.nodes:
            t = n.target
            functional = getattr(t, "__module__", "").endswith("nn.functional")
            name = t if isinstance(t, str) else t.__name__
            # PyTorch's nn.functional handlers record their default arguments too.
            kwargs = None if functional else arg(dict(n.kwargs))
            nodes.append([n.op, n.name, name, arg(n.args), kwargs])
        code = gm.code.replace(lib.__name__ + ".", "LIB.")
        out[key] = {"nodes": nodes, "code": None if key == "functional" else code}
    return out
"""


def _torch_structures() -> dict:
    if importlib.util.find_spec("torch") is not None:
        import torch

        scope: dict = {}
        exec(DESCRIBE, scope)
        return scope["describe"](torch, MODELS)
    python = os.environ.get("FLAMBEAU_TORCH_PYTHON")
    if not python:
        pytest.skip("needs PyTorch here or FLAMBEAU_TORCH_PYTHON naming a Python with it")
    script = (
        DESCRIBE
        + "\nimport sys, torch\nprint(json.dumps(describe(torch, json.loads(sys.stdin.read()))))"
    )
    out = subprocess.run([python, "-c", script], input=json.dumps(MODELS), capture_output=True,
                         text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def structures():
    import flambeau

    theirs = _torch_structures()
    scope: dict = {}
    exec(DESCRIBE, scope)
    ours = json.loads(json.dumps(scope["describe"](flambeau, MODELS)))
    return ours, theirs


@pytest.mark.parametrize("key", list(MODELS))
def test_same_nodes_and_code_as_torch_fx(structures, key):
    ours, theirs = structures
    assert ours[key]["nodes"] == theirs[key]["nodes"]
    if theirs[key]["code"] is not None:
        code = ours[key]["code"]
        assert code == theirs[key]["code"], textwrap.indent(code, "  ")
