"""flambeau.fx graphs after tracing: editing nodes, dead code, GraphModule surgery,
Interpreter, Transformer, replace_pattern and ShapeProp."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import flambeau
import flambeau.fx as fx
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.fx.immutable_collections import immutable_dict, immutable_list
from flambeau.fx.node import map_aggregate
from flambeau.fx.passes.shape_prop import ShapeProp, TensorMetadata


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        x = flambeau.relu(self.bn(self.conv(x)))
        x = F.avg_pool2d(x, 2)
        x = flambeau.flatten(x, 1)
        return flambeau.relu(self.fc(x))


def test_replace_relu_by_gelu_through_the_target():
    model = Net()
    gm = fx.symbolic_trace(model)
    relus = gm.graph.find_nodes(op="call_function", target=flambeau.relu)
    assert [n.name for n in relus] == ["relu", "relu_1"]
    for node in relus:
        node.target = F.gelu
    assert gm.graph.find_nodes(op="call_function", target=flambeau.relu) == []
    assert len(gm.graph.find_nodes(op="call_function", target=F.gelu)) == 2
    gm.recompile()
    assert "relu = flambeau.nn.functional.gelu(bn);  bn = None" in gm.code
    x = flambeau.randn(2, 3, 10, 10)
    model.eval()
    gm.eval()
    expected = F.gelu(
        model.fc(flambeau.flatten(F.avg_pool2d(F.gelu(model.bn(model.conv(x))), 2), 1))
    )
    same(gm(x), expected)


def test_insert_erase_and_dead_code():
    def f(x):
        y = x + 1
        unused = y * 5  # noqa: F841
        return y.relu()

    gm = fx.symbolic_trace(f)
    g = gm.graph
    assert len(g.nodes) == 5
    assert [n.name for n in reversed(g.nodes)] == ["output", "relu", "mul", "add", "x"]
    add = g.find_nodes(op="call_function", target=operator.add)[0]
    # insert a neg after add and make add's users take it
    with g.inserting_after(add):
        neg = g.call_function(flambeau.neg, (add,))
    add.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
    assert list(add.users) == [neg] and neg.args == (add,)
    assert g.eliminate_dead_code() is True
    assert [n.name for n in g.nodes] == ["x", "add", "neg", "relu", "output"]
    assert g.eliminate_dead_code() is False
    g.lint()
    gm.recompile()
    x = flambeau.randn(4)
    same(gm(x), (-(x + 1)).relu())
    # erasing a node that is still used fails; once unused it goes
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(neg)
    relu = neg.next
    relu.replace_input_with(neg, add)
    g.erase_node(neg)
    assert len(g.nodes) == 4 and relu.prev is add
    gm.recompile()
    same(gm(x), (x + 1).relu())


def test_inserting_before_and_moving_nodes():
    gm = fx.symbolic_trace(lambda x: flambeau.sigmoid(x) * 3)
    g = gm.graph
    mul = g.find_nodes(op="call_function", target=operator.mul)[0]
    sig = mul.args[0]
    with g.inserting_before(sig):
        scaled = g.call_method("mul", (sig.args[0], 2.0))
    sig.update_arg(0, scaled)
    mul.update_arg(1, 4)
    g.lint()
    gm.recompile()
    x = flambeau.randn(3)
    same(gm(x), flambeau.sigmoid(x * 2.0) * 4)
    assert "mul_1 = x.mul(2.0);  x = None" in gm.code
    # prepend / append move nodes around
    out = g.output_node()
    assert out.op == "output" and out.prev is mul
    mul.kwargs = {}
    mul.update_kwarg("extra", None)
    assert mul.kwargs == {"extra": None}
    mul.kwargs = {}
    # a node used before it is defined fails lint
    scaled.prepend(sig)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    scaled.append(sig)
    g.lint()


def test_node_meta_format_and_users():
    gm = fx.symbolic_trace(lambda x, y: flambeau.add(x, y, alpha=2))
    x, y, add, out = gm.graph.nodes
    assert add.all_input_nodes == [x, y] and list(x.users) == [add]
    assert add.kwargs == {"alpha": 2} and isinstance(add.kwargs, immutable_dict)
    assert add.format_node() == (
        "%add : [num_users=1] = call_function[target=flambeau.add](args = (%x, %y), "
        "kwargs = {alpha: 2})"
    )
    assert x.format_node() == "%x : [num_users=1] = placeholder[target=x]"
    assert out.format_node() == "return add"
    assert add.next is out and add.prev is y
    assert not add.is_impure() and out.is_impure()
    neg = gm.graph.call_function(flambeau.neg, (y,))
    neg.meta["note"] = "kept"
    add.replace_all_uses_with(neg, propagate_meta=False)
    assert out.args == (neg,)
    with pytest.raises(AssertionError, match="already has .meta keys"):
        add.replace_all_uses_with(neg, propagate_meta=True)


def test_immutable_arguments_and_map_helpers():
    gm = fx.symbolic_trace(lambda x: flambeau.cat([x, x], 0))
    cat = gm.graph.find_nodes(op="call_function", target=flambeau.cat)[0]
    assert isinstance(cat.args[0], immutable_list)
    with pytest.raises(NotImplementedError, match="does not support mutation"):
        cat.args[0].append(1)
    names = fx.map_arg(cat.args, lambda n: n.name)
    assert names == (["x", "x"], 0)
    assert map_aggregate({"a": (1, [2, slice(1, 3)])}, lambda v: v) == {"a": (1, [2, slice(1, 3)])}


def test_graph_built_by_hand_and_dict_root():
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("layer.weight")
    mm = g.call_function(flambeau.matmul, (x, w))
    t = g.call_method("tanh", (mm,))
    lin = g.call_module("head", (t,))
    g.output(lin)
    root = {"layer.weight": flambeau.randn(4, 4), "head": nn.Linear(4, 2)}
    gm = fx.GraphModule(root, g, class_name="Handmade")
    assert type(gm).__name__ == "Handmade"
    assert isinstance(gm.layer, nn.Module) and "weight" in dict(gm.layer.named_buffers())
    inp = flambeau.randn(3, 4)
    same(gm(inp), root["head"](flambeau.matmul(inp, root["layer.weight"]).tanh()))
    with pytest.raises(RuntimeError, match="not provided in ``root``"):
        fx.GraphModule({}, g)
    assert "layer_weight = self.layer.weight" in gm.code


def test_graph_copy_node_copy_deepcopy_and_graph_setter():
    import copy

    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 3), nn.ReLU()))
    g2 = copy.deepcopy(gm.graph)
    assert [n.name for n in g2.nodes] == [n.name for n in gm.graph.nodes]
    assert all(a is not b for a, b in zip(g2.nodes, gm.graph.nodes))
    g3 = fx.Graph()
    val_map = {}
    out = g3.graph_copy(gm.graph, val_map)
    g3.output(out)
    gm.graph = g3  # assigning a graph recompiles
    assert gm.graph is g3 and g3.owning_module is gm
    x = flambeau.randn(2, 3)
    same(gm(x), flambeau.relu(getattr(gm, "0")(x)))


def test_submodule_surgery():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

        def forward(self, x):
            return self.b(self.a(x))

    model = M()
    gm = fx.symbolic_trace(model)
    assert type(gm.b) is nn.Module  # holds only what the graph uses: b.0 and b.1
    assert gm.add_submodule("extra.scale", nn.Identity()) is True
    assert isinstance(gm.extra.scale, nn.Identity)
    node = gm.graph.find_nodes(op="call_module", target="a")[0]
    with gm.graph.inserting_after(node):
        ident = gm.graph.call_module("extra.scale", (node,))
    node.replace_all_uses_with(ident, delete_user_cb=lambda u: u is not ident)
    gm.recompile()
    x = flambeau.randn(2, 3)
    same(gm(x), model(x))
    with pytest.warns(UserWarning, match="no underlying reference"):
        stray = gm.graph.call_module("nosuch", ())
    gm.graph.erase_node(stray)
    assert gm.delete_submodule("extra.nosuch") is False
    # drop the identity again, then every module no node uses
    (user,) = ident.users
    user.replace_input_with(ident, node)
    gm.graph.erase_node(ident)
    gm.recompile()
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra") and hasattr(gm.b, "0")
    same(gm(x), model(x))


def test_interpreter_matches_and_can_be_overridden():
    model = Net().eval()
    gm = fx.symbolic_trace(model)
    x = flambeau.randn(2, 3, 10, 10)
    same(fx.Interpreter(gm).run(x), model(x))

    class Count(fx.Interpreter):
        def __init__(self, m):
            super().__init__(m)
            self.seen = []

        def run_node(self, n):
            self.seen.append(n.op)
            return super().run_node(n)

        def call_function(self, target, args, kwargs):
            if target is flambeau.relu:
                return flambeau.sigmoid(*args)
            return super().call_function(target, args, kwargs)

    counter = Count(gm)
    out = counter.run(x)
    assert counter.seen.count("call_module") == 3 and counter.seen[0] == "placeholder"
    flat = flambeau.flatten(F.avg_pool2d(flambeau.sigmoid(model.bn(model.conv(x))), 2), 1)
    same(out, flambeau.sigmoid(model.fc(flat)))
    # keep every value, or start from some of them
    keep = fx.Interpreter(gm, garbage_collect_values=False)
    keep.run(x)
    assert len(keep.env) == len(gm.graph.nodes)
    conv = gm.graph.find_nodes(op="call_module", target="conv")[0]
    zeros = flambeau.zeros(2, 6, 8, 8)
    partial = fx.Interpreter(gm).run(x, initial_env={conv: zeros})
    same(
        partial,
        model.fc(flambeau.flatten(F.avg_pool2d(flambeau.relu(model.bn(zeros)), 2), 1)).relu(),
    )
    same(fx.Interpreter(gm).boxed_run([x]), model(x))
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        fx.Interpreter(gm).run()


def test_transformer_rewrites_into_a_new_module():
    class SwapNegSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is flambeau.sigmoid:
                return flambeau.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                self_arg, *rest = args
                return self_arg.sigmoid(*rest, **kwargs)
            return super().call_method(target, args, kwargs)

    def fn(x):
        return flambeau.sigmoid(x).neg()

    gm = fx.symbolic_trace(fn)
    new = SwapNegSigmoid(gm).transform()
    assert isinstance(new, fx.GraphModule) and new is not gm
    x = flambeau.randn(5)
    same(new(x), flambeau.neg(x).sigmoid())
    same(gm(x), fn(x))  # the original is unchanged
    assert [n.op for n in new.graph.nodes] == [
        "placeholder",
        "call_function",
        "call_method",
        "output",
    ]
    # modules and parameters come along
    model = nn.Sequential(nn.Linear(3, 2))
    same(
        fx.Transformer(fx.symbolic_trace(model)).transform()(flambeau.ones(1, 3)),
        model(flambeau.ones(1, 3)),
    )


def test_replace_pattern():
    class M(nn.Module):
        def forward(self, x, w1, w2):
            m1 = flambeau.cat([w1, w2]).sum()
            m2 = flambeau.cat([w1, w2]).sum()
            return x + flambeau.max(m1) + flambeau.max(m2)

    def pattern(w1, w2):
        return flambeau.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return flambeau.stack([w1, w2]).sum()

    gm = fx.symbolic_trace(M())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert gm.graph.find_nodes(op="call_function", target=flambeau.cat) == []
    assert len(gm.graph.find_nodes(op="call_function", target=flambeau.stack)) == 2
    x, w1, w2 = flambeau.randn(3), flambeau.randn(3), flambeau.randn(3)
    expected = x + flambeau.stack([w1, w2]).sum() * 2
    np.testing.assert_allclose(gm(x, w1, w2).numpy(), expected.numpy(), rtol=1e-6)

    # a pattern whose inner value is used outside the match does not match
    def g(x):
        y = flambeau.relu(x)
        return y.neg() + y

    gg = fx.symbolic_trace(g)
    assert fx.replace_pattern(gg, lambda x: flambeau.relu(x).neg(), lambda x: x) == []


def test_shape_prop_records_tensor_metadata():
    model = Net()
    gm = fx.symbolic_trace(model)
    x = flambeau.randn(2, 3, 10, 10)
    out = ShapeProp(gm).propagate(x)
    assert out.shape == (2, 5)
    shapes = [(n.name, tuple(n.meta["tensor_meta"].shape)) for n in gm.graph.nodes]
    assert shapes == [
        ("x", (2, 3, 10, 10)),
        ("conv", (2, 6, 8, 8)),
        ("bn", (2, 6, 8, 8)),
        ("relu", (2, 6, 8, 8)),
        ("avg_pool2d", (2, 6, 4, 4)),
        ("flatten", (2, 96)),
        ("fc", (2, 5)),
        ("relu_1", (2, 5)),
        ("output", (2, 5)),
    ]
    meta = gm.graph.find_nodes(op="call_module", target="conv")[0].meta["tensor_meta"]
    assert isinstance(meta, TensorMetadata)
    assert meta.dtype == flambeau.float32 and meta.requires_grad
    assert meta.stride == (384, 64, 8, 1) and meta.memory_format == flambeau.contiguous_format
    assert gm.graph.find_nodes(op="placeholder")[0].meta["type"] is flambeau.Tensor
    # tuples of tensors get a tuple of metadata
    gt = fx.symbolic_trace(lambda t: t.chunk(2))
    ShapeProp(gt).propagate(flambeau.ones(4, 3).t())
    chunk = list(gt.graph.nodes)[1]
    assert [m.shape for m in chunk.meta["tensor_meta"]] == [(2, 4), (1, 4)]
    assert chunk.meta["tensor_meta"][0].memory_format is None  # a transposed view
    printed = gm.print_readable(print_output=False)
    assert 'conv: "f32[2, 6, 8, 8]" = self.conv(x)' in printed


def test_print_tabular(capsys):
    fx.symbolic_trace(lambda x: x + 1).graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[2].split() == ["placeholder", "x", "x", "()", "{}"]
    assert lines[-1].split() == ["output", "output", "output", "(add,)", "{}"]


def test_feature_extraction_by_rewriting_the_output():
    """What torchvision's create_feature_extractor does: return intermediate values
    instead, then drop what no longer contributes."""
    model = Net().eval()
    gm = fx.symbolic_trace(model)
    g = gm.graph
    wanted = {n.name: n for n in g.nodes if n.name in ("bn", "flatten")}
    old_output = g.output_node()
    with g.inserting_after(old_output):
        g.output({"bn": wanted["bn"], "flat": wanted["flatten"]})
    g.erase_node(old_output)
    assert g.eliminate_dead_code()
    gm.recompile()
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "fc") and hasattr(gm, "conv")
    x = flambeau.randn(2, 3, 10, 10)
    out = gm(x)
    assert set(out) == {"bn", "flat"}
    bn = model.bn(model.conv(x))
    same(out["bn"], bn)
    same(out["flat"], flambeau.flatten(F.avg_pool2d(flambeau.relu(bn), 2), 1))
    assert "return {'bn': bn, 'flat': flatten}" in gm.code


def test_tuple_outputs_of_leaf_modules_and_size_unpacking():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 4, batch_first=True)
            self.mha = nn.MultiheadAttention(4, 2, batch_first=True)

        def forward(self, x):
            b, t, c = x.size()
            out, (h, _) = self.lstm(x)
            att, _ = self.mha(out, out, out, need_weights=False)
            return att.reshape(b * t, c) + h[-1].repeat(t, 1)

    model = M().eval()
    gm = fx.symbolic_trace(model)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["lstm", "mha"]
    x = flambeau.randn(3, 5, 4)
    same(gm(x), model(x))


def test_einsum_of_a_list_of_proxies_records_the_operands_spread_out():
    # opt_einsum's torch backend calls torch.einsum(eq, [a, b]); PyTorch's einsum spreads
    # the list before __torch_function__, so graphs hold einsum(eq, a, b) (opt_einsum_fx
    # reads the operands from there).
    graph = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(graph)
    a = fx.Proxy(graph.placeholder("a"), tracer)
    b = fx.Proxy(graph.placeholder("b"), tracer)
    flambeau.einsum("ij,jk->ik", [a, b])
    (node,) = [n for n in graph.nodes if n.op == "call_function"]
    assert node.target is flambeau.einsum and node.args == (
        "ij,jk->ik",
        *[n for n in graph.nodes if n.op == "placeholder"],
    )
