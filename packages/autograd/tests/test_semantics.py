"""Autograd semantics, each against hand-derived values."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flambeau as F
from flambeau import autograd


def t(values, requires_grad=True):
    return F.tensor(values, dtype=F.float64, requires_grad=requires_grad)


def test_leaf_and_graph_attributes():
    x = t([1.0, 2.0])
    y = x * 3
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    assert y.grad_fn.next_functions[0][0].__class__.__name__ == "AccumulateGrad"


def test_backward_accumulates_into_leaves():
    x = t([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])


def test_broadcast_gradient_is_reduced_to_input_shape():
    a = t([[1.0], [2.0]])
    b = t([10.0, 20.0, 30.0])
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[60.0], [60.0]])
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 3.0, 3.0])


def test_python_scalars_and_reflected_operators():
    x = t([2.0])
    y = (3 - x) * 2 + 1 / x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-2.0 - 1 / 4])


def test_non_scalar_backward_needs_gradient():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(F.tensor([1.0, 0.5], dtype=F.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0])


def test_second_backward_through_freed_graph_raises():
    x = t([1.0])
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = t([1.0])
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4 * np.e])


def test_grad_does_not_touch_dot_grad_and_allow_unused():
    x, z = t([1.0, 2.0]), t([5.0])
    y = (x * x).sum()
    (g,) = autograd.grad(y, [x])
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        autograd.grad((x * 2).sum(), [x, z])
    gx, gz = autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gz is None


def test_grads_batched_gives_one_vector_jacobian_product_per_row():
    # y = tanh(x @ w): the rows of the identity as grad_outputs give the whole Jacobian,
    # compared with its closed form (1 - y^2) w^T per output column.
    rng = np.random.default_rng(0)
    xn, wn = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    x, w = F.tensor(xn, requires_grad=True), F.tensor(wn, requires_grad=True)
    y = F.tanh(x @ w)
    eye = F.eye(5, dtype=F.float64).expand(3, 5, 5).movedim(-1, 0)
    jx, jw = autograd.grad(y, [x, w], eye, create_graph=True, is_grads_batched=True)
    yn = np.tanh(xn @ wn)
    expected = np.stack([(1 - yn[:, k : k + 1] ** 2) * wn[:, k] for k in range(5)])
    np.testing.assert_allclose(jx.detach().numpy(), expected, rtol=1e-12)
    assert jw.shape == (5, 4, 5) and jx.requires_grad  # create_graph: differentiable
    jx.sum().backward()
    assert w.grad is not None and x.grad.shape == (3, 4)
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of \(5, 3, 4\)"):
        autograd.grad(F.tanh(x @ w), x, F.ones(5, 3, 4), is_grads_batched=True)
    (empty,) = autograd.grad(F.tanh(x @ w), x, F.ones(0, 3, 5), is_grads_batched=True)
    assert empty.shape == (0, 3, 4)


def test_a_create_graph_gradient_is_a_fresh_tensor_that_detaches_in_place():
    # Adahessian-style optimizers: backward(create_graph=True), then p.grad.detach_().
    # The gradient of w in x @ w.t() comes out as a transposed view; PyTorch's
    # AccumulateGrad copies it (differentiably) into .grad, laid out like w.
    w = F.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = F.tensor(np.ones((4, 3)))
    ((x @ w.t()) ** 2).sum().backward(create_graph=True)
    g = w.grad
    assert g.grad_fn is not None and g._base is None and g.stride() == w.stride()
    (gg,) = autograd.grad(g.sum(), w, retain_graph=True)
    # g = 2 w x^T x = 8 w J (J: 3x3 ones), so sum(g) = 24 sum(w)
    np.testing.assert_allclose(gg.numpy(), np.full((2, 3), 24.0))
    g.detach_()
    assert not g.requires_grad and g.grad_fn is None


def test_higher_order_gradients():
    x = t([2.0])
    y = (x * x * x).sum()
    (g,) = autograd.grad(y, x, create_graph=True)  # 3x^2
    (gg,) = autograd.grad(g.sum(), x)  # 6x
    np.testing.assert_allclose(g.detach().numpy(), [12.0])
    np.testing.assert_allclose(gg.numpy(), [12.0])


def test_deep_chain_does_not_recurse():
    x = t([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_wide_graph():
    x = t([1.0, 2.0])
    total = sum((x * i).sum() for i in range(1000))
    total.backward()
    np.testing.assert_allclose(x.grad.numpy(), [sum(range(1000))] * 2)


def test_detach_and_no_grad_stop_recording():
    x = t([1.0])
    assert not x.detach().requires_grad
    with autograd.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None

    @autograd.no_grad()
    def f(v):
        return v * 2

    assert not f(x).requires_grad
    with autograd.no_grad():
        with autograd.enable_grad():
            assert (x * 2).requires_grad
    with autograd.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert F.is_grad_enabled()
    with autograd.inference_mode():
        assert not (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with autograd.no_grad():
        th = threading.Thread(target=lambda: seen.append(F.is_grad_enabled()))
        th.start()
        th.join()
    assert seen == [True]


def test_modifying_a_saved_tensor_raises_at_backward():
    x = t([1.0, 2.0])
    y = x * 1  # non-leaf
    z = (y * y).sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_in_place_on_leaf_requiring_grad_raises():
    x = t([1.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)


def test_in_place_on_non_leaf_rebases_graph():
    x = t([1.0, 2.0])
    y = x * 2
    y.mul_(x)  # y = 2x * x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_tensor_hook_replaces_gradient_and_is_removable():
    x = t([1.0, 2.0])
    h = x.register_hook(lambda g: g * 10)
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_hook_on_intermediate_and_retain_grad():
    x = t([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    (y * y).sum().backward()
    np.testing.assert_allclose(seen[0], [6.0, 12.0])
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0])


def test_post_accumulate_grad_hook():
    x = t([1.0])
    calls = []
    x.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.item()))
    (x * 5).sum().backward()
    assert calls == [5.0]


def test_node_hooks():
    x = t([1.0])
    y = x * 2
    pre, post = [], []
    y.grad_fn.register_prehook(lambda go: pre.append(go[0].item()))
    y.grad_fn.register_hook(lambda gi, go: post.append(gi[0].item()))
    (y * 3).sum().backward()
    assert pre == [3.0] and post == [6.0]


class Cube(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_custom_function():
    x = t([2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [12.0])
    assert autograd.gradcheck(Cube.apply, (t([0.5, -1.5]),))


def test_custom_function_node_has_a_class_of_its_own():
    # As PyTorch's FunctionMeta: grad_fn is an instance of a per-Function subclass of
    # BackwardCFunction named after the Function (graph printers such as torchviz show
    # type(grad_fn).__name__), whose _forward_cls is the Function.
    y = Cube.apply(t([2.0]))
    node_cls = type(y.grad_fn)
    assert node_cls.__name__ == "CubeBackward"
    assert node_cls is Cube._backward_cls
    assert node_cls.__module__ == "flambeau.autograd.function"
    assert issubclass(node_cls, autograd.function.BackwardCFunction)
    assert y.grad_fn._forward_cls is Cube
    assert type(TwoOutputs.apply(t([1.0]))[0].grad_fn).__name__ == "TwoOutputsBackward"


class TwoOutputs(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        idx = F.zeros(1, dtype=F.int64)
        ctx.mark_non_differentiable(idx)
        return x * 2, idx

    @staticmethod
    def backward(ctx, g, gidx):
        assert ctx.needs_input_grad == (True,)
        return g * 2


def test_custom_function_non_differentiable_output():
    x = t([1.0])
    y, idx = TwoOutputs.apply(x)
    assert not idx.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0])


def test_once_differentiable_backward_does_not_record():
    class Sq(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = t([3.0])
    (g,) = autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad


def test_detect_anomaly_names_forward_op():
    x = t([-1.0])
    with autograd.detect_anomaly():
        y = x.sqrt()  # nan forward, nan backward
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            y.sum().backward()


def test_functional_api():
    from flambeau.autograd import functional as fn

    x = t([1.0, 2.0], requires_grad=False)
    jac = fn.jacobian(lambda v: v * v, x)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0]))
    hess = fn.hessian(lambda v: (v * v * v).sum(), x)
    np.testing.assert_allclose(hess.numpy(), np.diag([6.0, 12.0]))
    _, vj = fn.vjp(lambda v: v * 3, x, t([1.0, 1.0], False))
    np.testing.assert_allclose(vj.numpy(), [3.0, 3.0])
    _, jv = fn.jvp(lambda v: v * v, x, t([1.0, 0.0], False))
    np.testing.assert_allclose(jv.numpy(), [2.0, 0.0])
    _, hv = fn.hvp(lambda v: (v * v * v).sum(), x, t([1.0, 1.0], False))
    np.testing.assert_allclose(hv.numpy(), [6.0, 12.0])


def test_gradcheck_reports_wrong_gradient():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (t([1.0]),))
    assert autograd.gradcheck(Wrong.apply, (t([1.0]),), raise_exception=False) is False


def test_gradgradcheck():
    assert autograd.gradgradcheck(lambda v: (v * v * v).sum(), (t([0.5, 1.5]),))


def test_out_argument_with_grad_inputs_is_refused():
    x = t([1.0, 2.0])
    out = F.empty(2, dtype=F.float64)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        F.add(x, x, out=out)
    with autograd.no_grad():
        F.add(x, x, out=out)
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])


def test_repr_names_the_backward_node():
    x = t([1.0, 2.0])
    assert "grad_fn=<MulBackward0>" in repr(x * 2)
    assert repr(x).endswith("requires_grad=True)")


def test_ops_that_return_their_input_keep_a_leaf_a_leaf():
    x = F.ones(2, 3, requires_grad=True)
    for same in (x.to(F.float32), x.contiguous(), x.flatten(0, 0)):
        assert same.is_leaf or same is not x
    assert x.is_leaf and x.grad_fn is None
    (x.to(F.float32) * 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_requires_grad_flag_changes_are_not_in_place_ops():
    x = F.ones(2, requires_grad=True)
    assert x.requires_grad_(False) is x and not x.requires_grad
    x.requires_grad_(True)
    assert x.requires_grad and x.is_leaf


def test_like_constructors_have_no_derivative():
    x = F.ones(3, requires_grad=True)
    y = (F.zeros_like(x) + F.ones_like(x) + F.full_like(x, 2.0)) * x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    "op",
    [
        lambda a, o: a.view_as(o),
        lambda a, o: a.reshape_as(o),
        lambda a, o: a[:3].expand_as(o),
        lambda a, o: a.double().type_as(o),
        lambda a, o: a.double().to(o),
    ],
    ids=["view_as", "reshape_as", "expand_as", "type_as", "to_other"],
)
def test_an_argument_lending_only_its_shape_or_dtype_is_not_an_input(op):
    # As in PyTorch (where these are self.view(other.shape), self.to(other.dtype), ...):
    # `other` requiring grad does not make the result require grad, so the result can be
    # written in place and saved without a version check (nn.utils.prune's global pruning
    # builds its masks with view_as of a weight that requires grad).
    other = (F.ones(2, 3, requires_grad=True) * 2)[:, :3]
    a = F.arange(6.0)
    out = op(a, other)
    assert not out.requires_grad and out.grad_fn is None
    assert out.shape == (2, 3) or out.shape == (6,)
    if 0 not in out.stride():  # (an expanded tensor cannot be written in place)
        out.mul_(0.5)  # not part of any graph: in place is fine
    # With `a` requiring grad, the gradient reaches `a` only.
    a = F.arange(6.0, requires_grad=True)
    out = op(a, other)
    assert out.requires_grad
    (out * 3).sum().backward()
    expanded = 0 in out.stride()  # a[:3] read twice
    expected = [6.0, 6.0, 6.0, 0.0, 0.0, 0.0] if expanded else [3.0] * 6
    assert a.grad.tolist() == expected
    assert other.grad is None


def test_grad_modes_are_also_top_level():
    assert F.no_grad is autograd.no_grad
    with F.no_grad():
        assert not (F.ones(1, requires_grad=True) * 2).requires_grad


@pytest.mark.parametrize("method", ["selu_", "celu_", "relu6_"])
def test_inplace_composites_keep_their_saved_input(method):
    a = F.tensor([-1.5, -0.2, 0.3, 2.0, 7.0], dtype=F.float64, requires_grad=True)
    x = a * 2
    getattr(x, method)()
    x.sum().backward()
    b = a.detach().clone().requires_grad_()
    getattr(F, method.rstrip("_"))(b * 2).sum().backward()
    assert a.grad.tolist() == b.grad.tolist()


def test_grad_runs_only_the_part_of_the_graph_that_reaches_its_inputs():
    # As PyTorch: autograd.grad(out, inputs) skips nodes from which no input is reachable.
    calls = []

    class Spy(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append("spy")
            return g * 2

    x = F.ones(3, requires_grad=True)
    y = F.ones(3, requires_grad=True)
    h = y * 3
    out = (Spy.apply(x) + h * h).sum()
    (gy,) = autograd.grad(out, [y], retain_graph=True)
    assert calls == [] and gy.tolist() == [18.0] * 3
    (gh,) = autograd.grad(out, [h], retain_graph=True)  # an intermediate: nothing below it runs
    assert calls == [] and gh.tolist() == [6.0] * 3
    gx, gy = autograd.grad(out, [x, y])
    assert calls == ["spy"] and gx.tolist() == [2.0] * 3 and gy.tolist() == [18.0] * 3
    assert x.grad is None and y.grad is None
    z = F.ones(2, requires_grad=True)
    loss = (Spy.apply(z) * z).sum()
    loss.backward(inputs=[z])
    assert z.grad.tolist() == [4.0, 4.0]


def test_ready_nodes_run_latest_created_first_as_in_pytorch():
    # PyTorch's ready queue: an AccumulateGrad first, then the node created last. Two
    # Linear layers back to back: lin1's weight gradient (through its transpose, made in
    # lin1's forward) completes before lin0's node runs (skorch's doctor records this).
    lin0, lin1 = F.nn.Linear(4, 4), F.nn.Linear(4, 2)
    order = []
    for name, p in (("lin0.weight", lin0.weight), ("lin0.bias", lin0.bias),
                    ("lin1.weight", lin1.weight), ("lin1.bias", lin1.bias)):  # fmt: skip
        p.register_hook(lambda g, name=name: order.append(name))
    lin1(lin0(F.randn(5, 4))).sum().backward()
    assert order == ["lin1.bias", "lin1.weight", "lin0.bias", "lin0.weight"]
