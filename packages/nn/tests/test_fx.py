"""flambeau.fx symbolic tracing: what it records, the code it generates, and that the
GraphModule computes what the module does (values and gradients)."""

from __future__ import annotations

import copy
import operator
import pickle

import numpy as np
import pytest

import flambeau
import flambeau.fx as fx
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.fx.proxy import TraceError


def leaf_sum(x, y):
    """Not traceable as it is (control flow on a value): registered with wrap below."""
    return x + y if len(x) > 0 else x


fx.wrap("leaf_sum")


@fx.wrap
def decorated_leaf(x):
    return x * 3 if x.sum() > -1e9 else x


def ops(gm):
    return [
        (n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in gm.graph.nodes
    ]


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def check_grads(model, gm, *inputs):
    """Backward through the model and through its GraphModule (which shares its
    parameters) gives the same parameter gradients."""
    model.zero_grad()
    model(*inputs).sum().backward()
    ref = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    gm(*inputs).sum().backward()
    for n, p in gm.named_parameters():
        same(p.grad, ref[n])


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.fc = nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = x.view(x.size(0), -1)
        return F.log_softmax(self.fc(x), dim=1)


class Residual(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = flambeau.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return flambeau.relu(out + x)


def test_mlp_records_leaf_modules_and_reproduces_outputs_and_gradients():
    model = MLP()
    gm = fx.symbolic_trace(model)
    assert ops(gm) == [
        ("placeholder", "x"),
        ("call_module", "fc1"),
        ("call_module", "act"),
        ("call_module", "fc2"),
        ("output", "output"),
    ]
    assert type(gm).__name__ == "MLP" and isinstance(gm, fx.GraphModule)
    assert gm.fc1 is model.fc1  # submodules are shared, not copied
    x = flambeau.randn(5, 6)
    same(gm(x), model(x))
    check_grads(model, gm, x)
    assert gm.code == (
        "\n\n\ndef forward(self, x):\n"
        "    fc1 = self.fc1(x);  x = None\n"
        "    act = self.act(fc1);  fc1 = None\n"
        "    fc2 = self.fc2(act);  act = None\n"
        "    return fc2\n    "
    )


def test_cnn_with_functional_calls():
    model = CNN()
    gm = fx.symbolic_trace(model)
    assert ops(gm) == [
        ("placeholder", "x"),
        ("call_module", "conv1"),
        ("call_function", "relu"),
        ("call_function", "max_pool2d"),
        ("call_module", "conv2"),
        ("call_function", "relu"),
        ("call_method", "size"),
        ("call_method", "view"),
        ("call_module", "fc"),
        ("call_function", "log_softmax"),
        ("output", "output"),
    ]
    code = gm.code
    assert "relu = flambeau.nn.functional.relu(conv1);  conv1 = None" in code
    assert "size = relu_1.size(0)" in code
    assert "view = relu_1.view(size, -1);  relu_1 = size = None" in code
    assert "log_softmax = flambeau.nn.functional.log_softmax(fc, dim = 1);  fc = None" in code
    x = flambeau.randn(2, 3, 10, 10)
    same(gm(x), model(x))
    check_grads(model, gm, x)


def test_residual_block_in_train_and_eval_mode():
    model = Residual()
    gm = fx.symbolic_trace(model)
    names = [n.name for n in gm.graph.nodes]
    assert names == ["x", "conv1", "bn1", "relu", "conv2", "bn2", "add", "relu_1", "output"]
    assert gm.graph.find_nodes(op="call_function", target=operator.add)[0].args[1].name == "x"
    x = flambeau.randn(2, 4, 5, 5)
    same(gm(x), model(x))  # training mode: batch statistics, running stats updated alike
    check_grads(model, gm, x)
    model.eval()
    assert not gm.training or gm.bn1 is model.bn1
    gm.eval()
    same(gm(x), model(x))


class TensorMethods(nn.Module):
    def forward(self, x):
        b = x.size(0)
        y = x.permute(0, 2, 1).flatten(1)
        a, c = y.chunk(2, dim=1)
        z = a[:, 1:3] * c[..., -2:]
        w = x.reshape(b, -1)[None, :, ::2]
        return z.sum(dim=1, keepdim=True) + w.mean() + x.shape[1]


def test_tensor_methods_getitem_and_unpacking():
    model = TensorMethods()
    gm = fx.symbolic_trace(model)
    kinds = ops(gm)
    assert ("call_method", "permute") in kinds and ("call_method", "chunk") in kinds
    getitems = gm.graph.find_nodes(op="call_function", target=operator.getitem)
    # a, c = chunk(...) unpacks into two getitem nodes; then the slicings.
    assert [g.args[1] for g in getitems[:2]] == [0, 1]
    assert getitems[2].args[1] == (slice(None, None, None), slice(1, 3, None))
    assert "getattr_1 = x.shape" in gm.code
    assert "getitem = chunk[0]" in gm.code and "getitem_1 = chunk[1];  chunk = None" in gm.code
    x = flambeau.randn(4, 3, 6)
    same(gm(x), model(x))


def test_flambeau_functions_and_operators():
    def f(x, y):
        s = flambeau.softmax(x, dim=1)
        c = flambeau.cat([s, y], dim=0)
        st = flambeau.stack((x, y))
        r = 2 - flambeau.relu(c) / 4 + (-x).abs().sum() ** 2
        m = (x @ y.t()) > 0
        return r, st, flambeau.where(m, 1.0, 0.0), ~m, x // 2 % 3

    gm = fx.symbolic_trace(f)
    code = gm.code
    for line in (
        "softmax = flambeau.softmax(x, dim = 1)",
        "cat = flambeau.cat([softmax, y], dim = 0);  softmax = None",
        "stack = flambeau.stack((x, y))",
        "truediv = relu / 4;  relu = None",
        "sub = 2 - truediv;  truediv = None",
        "neg = -x",
        "abs_1 = neg.abs();  neg = None",
        "pow_1 = sum_1 ** 2;  sum_1 = None",
        "matmul = x @ t;  t = None",
        "gt = matmul > 0;  matmul = None",
        "invert = ~gt",
        "floordiv = x // 2;  x = None",
        "mod = floordiv % 3;  floordiv = None",
        "return (add, stack, where, invert, mod)",
    ):
        assert line in code, line
    x, y = flambeau.randn(3, 3), flambeau.randn(3, 3)
    for a, b in zip(gm(x, y), f(x, y)):
        same(a, b)


def test_reflected_operators_and_tensor_on_the_left():
    const = flambeau.tensor([1.0, 2.0, 3.0])

    def f(x):
        return 1 + x, 3 * x, 2**x, const + x, const * 2

    gm = fx.symbolic_trace(f)
    adds = gm.graph.find_nodes(op="call_function", target=operator.add)
    assert adds[0].args == (1, adds[0].args[1])
    # tensor + proxy: the tensor's method, as PyTorch records it
    (add,) = gm.graph.find_nodes(op="call_method", target="add")
    assert add.args[0].op == "get_attr" and "add_1 = _tensor_constant0.add(x)" in gm.code
    # a tensor that is no attribute of the module is stored as a constant of the root
    assert isinstance(gm._tensor_constant0, flambeau.Tensor)
    x = flambeau.randn(3)
    for a, b in zip(gm(x), f(x)):
        same(a, b)


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 2)})

    def forward(self, x):
        x = self.seq(x)
        for layer in self.layers:
            x = flambeau.relu(layer(x))
        return self.heads["a"](x) - self.heads["b"](x)


def test_containers_are_traced_through():
    model = Containers()
    gm = fx.symbolic_trace(model)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert targets == ["seq.0", "seq.1", "layers.0", "layers.1", "heads.a", "heads.b"]
    names = [n.name for n in gm.graph.nodes if n.op == "call_module"]
    assert names == ["seq_0", "seq_1", "layers_0", "layers_1", "heads_a", "heads_b"]
    assert 'seq_0 = getattr(self.seq, "0")(x);  x = None' in gm.code
    x = flambeau.randn(3, 4)
    same(gm(x), model(x))
    check_grads(model, gm, x)
    # a Sequential at the root: its forward's parameter names the placeholder
    seq = nn.Sequential(nn.Linear(4, 2), nn.Sigmoid())
    gs = fx.symbolic_trace(seq)
    assert [n.op for n in gs.graph.nodes] == ["placeholder", "call_module", "call_module", "output"]
    same(gs(x), seq(x))


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x).sigmoid()


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.scale = nn.Parameter(flambeau.tensor([2.0]))
        self.register_buffer("shift", flambeau.tensor([0.5]))

    def forward(self, x):
        return self.inner(x) * self.scale + self.shift


def test_custom_leaf_modules_parameters_and_buffers():
    model = Outer()
    gm = fx.symbolic_trace(model)
    assert ops(gm) == [
        ("placeholder", "x"),
        ("call_module", "inner.fc"),
        ("call_method", "sigmoid"),
        ("get_attr", "scale"),
        ("call_function", "mul"),
        ("get_attr", "shift"),
        ("call_function", "add"),
        ("output", "output"),
    ]
    assert gm.get_buffer("shift") is model.shift and gm.scale is model.scale

    class KeepInner(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Inner) or super().is_leaf_module(m, qualname)

    graph = KeepInner().trace(model)
    gk = fx.GraphModule(model, graph)
    assert [n.target for n in graph.nodes if n.op == "call_module"] == ["inner"]
    x = flambeau.randn(2, 3)
    same(gk(x), model(x))
    same(gm(x), model(x))
    check_grads(model, gm, x)
    # the nn_module_stack meta says where a node came from
    fc = graph.find_nodes(op="call_module")[0]
    assert list(fc.meta["nn_module_stack"]) == ["inner"]


def test_wrap_records_leaf_functions():
    def f(x, y):
        return leaf_sum(x, y) + decorated_leaf(y)

    gm = fx.symbolic_trace(f)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls == [leaf_sum, decorated_leaf, operator.add]
    assert 'wrap("test_fx_leaf_sum")' in gm.code or 'wrap("' in gm.code
    x, y = flambeau.randn(3), flambeau.randn(3)
    same(gm(x, y), f(x, y))
    # the generated code re-registers the wrapped functions, so it traces again alike
    again = fx.symbolic_trace(gm)
    assert [n.target for n in again.graph.nodes if n.op == "call_function"] == calls
    with pytest.raises(NotImplementedError, match="top level of a module"):
        fx.wrap("leaf_sum")


def test_autowrap_of_math_and_given_functions():
    import math

    def g(x):
        return x * math.sqrt(2.0) + math.floor(x.shape[0] / 2)

    tracer = fx.Tracer()
    graph = tracer.trace(g)
    assert [n.target for n in graph.nodes if n.op == "call_function"].count(math.floor) == 1


def test_control_flow_iteration_and_len_are_errors():
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(
        TraceError, match="symbolically traced variables cannot be used as inputs to control flow"
    ):
        fx.symbolic_trace(branch)

    def loop(x):
        return [t for t in x]

    with pytest.raises(TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(loop)

    def length(x):
        return x * len(x)

    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        fx.symbolic_trace(length)
    assert issubclass(TraceError, ValueError)


def test_concrete_args_specialize_and_defaults_are_kept():
    def f(x, double, scale=3.0):
        return x * 2 * scale if double else x * scale

    gm = fx.symbolic_trace(f, concrete_args={"double": True})
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x", "double_1", "scale"]
    assert "def forward(self, x, double_1, scale = 3.0):" in gm.code
    message = "double has been specialized to have value True but got another value"
    assert f"_assert = flambeau._assert(eq, '{message}');  eq = _assert = None" in gm.code
    x = flambeau.randn(4)
    same(gm(x, True), f(x, True))
    same(gm(x, True, 0.5), f(x, True, 0.5))
    with pytest.raises(AssertionError, match="specialized to have value True"):
        gm(x, False)

    def g(x, mask=None):
        return x if mask is None else x * mask

    gn = fx.symbolic_trace(g, concrete_args={"mask": None})
    same(gn(x), x)
    with pytest.raises(AssertionError, match="specialized to have value None"):
        gn(x, flambeau.ones(4))


def test_varargs_kwargs_and_keyword_only_forward():
    class Star(nn.Module):
        def forward(self, x, *args):
            return x + args[0] * args[1]

    class Kw(nn.Module):
        def forward(self, x, **kwargs):
            return x - kwargs["bias"]

    class KwOnly(nn.Module):
        def forward(self, x, *, scale=2.0):
            return x * scale

    x, a, b = flambeau.randn(3), flambeau.randn(3), flambeau.randn(3)
    gm = fx.symbolic_trace(Star())
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == ["x", "*args"]
    assert "def forward(self, x, *args):" in gm.code
    same(gm(x, a, b), Star()(x, a, b))
    gk = fx.symbolic_trace(Kw())
    assert "def forward(self, x, **kwargs):" in gk.code
    same(gk(x, bias=a), Kw()(x, bias=a))
    go = fx.symbolic_trace(KwOnly())
    assert "def forward(self, x, scale = 2.0):" in go.code
    same(go(x, scale=3.0), KwOnly()(x, scale=3.0))
    same(go(x), KwOnly()(x))


def test_code_printing_and_graph_str():
    gm = fx.symbolic_trace(MLP())
    text = str(gm.graph)
    assert text.splitlines()[0] == "graph():"
    assert "%fc1 : [num_users=1] = call_module[target=fc1](args = (%x,), kwargs = {})" in text
    assert text.splitlines()[-1] == "    return fc2"
    printed = str(gm)
    assert printed.startswith("MLP(") and "def forward(self, x):" in printed
    readable = gm.print_readable(print_output=False)
    assert readable.startswith("class MLP(flambeau.nn.Module):\n    def forward(self, x):")
    assert "        fc1 = self.fc1(x);  x = None" in readable


def test_deepcopy_and_pickle():
    model = MLP()
    gm = fx.symbolic_trace(model)
    dup = copy.deepcopy(gm)
    assert dup.fc1 is not gm.fc1 and type(dup).__name__ == "MLP"
    assert dup.code == gm.code
    x = flambeau.randn(2, 6)
    same(dup(x), gm(x))
    dup.fc1.weight.data.zero_()  # a deep copy owns its parameters
    assert not flambeau.equal(dup(x), gm(x))
    restored = pickle.loads(pickle.dumps(gm))
    assert restored.code == gm.code and type(restored).__name__ == "MLP"
    same(restored(x), gm(x))


def test_symbolic_trace_of_a_graph_module_and_lambda():
    gm = fx.symbolic_trace(lambda x: flambeau.sigmoid(x) * 2)
    assert type(gm).__name__ == "<lambda>"
    again = fx.symbolic_trace(gm)
    assert ops(again) == ops(gm)
    x = flambeau.randn(3)
    same(again(x), gm(x))


def test_is_fx_tracing_and_proxy_repr():
    from flambeau.fx._symbolic_trace import is_fx_tracing

    seen = []

    def f(x):
        seen.append((is_fx_tracing(), repr(x)))
        return x

    fx.symbolic_trace(f)
    assert seen == [(True, "Proxy(x)")] and not is_fx_tracing()


def test_flambeau_fx_is_reachable_as_an_attribute():
    import importlib

    assert flambeau.fx is importlib.import_module("flambeau.fx")
    assert flambeau.fx.symbolic_trace is fx.symbolic_trace
