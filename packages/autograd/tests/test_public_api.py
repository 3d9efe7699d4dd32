"""torch.autograd's remaining public names in flambeau.autograd, against hand-derived values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as F
from flambeau import autograd
from flambeau.autograd import graph


def t(values, requires_grad=True):
    return F.tensor(values, dtype=F.float64, requires_grad=requires_grad)


# -- Variable -------------------------------------------------------------------------------


def test_variable_returns_a_detached_tensor():
    x = t([1.0, 2.0])
    y = x * 2
    v = autograd.Variable(y)
    assert type(v) is F.Tensor and v.grad_fn is None and not v.requires_grad
    assert v._is_view_of(y)  # the same memory
    w = autograd.Variable(y, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert autograd.Variable(F.ones(2), True).requires_grad
    assert tuple(autograd.Variable().shape) == (0,)
    assert isinstance(F.ones(1), autograd.Variable)
    assert not isinstance(1.0, autograd.Variable)


def test_variable_rejects_what_pytorch_rejects():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        autograd.Variable([1.0])
    with pytest.raises(RuntimeError, match="floating point and complex"):
        autograd.Variable(F.tensor([1, 2]), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed"):
        autograd.Variable(F.ones(1), volatile=True)


# -- __torch_function__ helpers -------------------------------------------------------------


class _Logged:
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((cls.__name__, func.__name__, types, args, kwargs))
        return "handled by " + cls.__name__


class _Declines(_Logged):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _public(x, y=None):
    return "plain"


def test_is_tensor_like():
    assert autograd.is_tensor_like(F.ones(1))
    assert autograd.is_tensor_like(F.Tensor)
    assert autograd.is_tensor_like(_Logged())
    assert not autograd.is_tensor_like(1.0)
    assert not autograd.is_tensor_like([F.ones(1)])


def test_has_torch_function():
    assert not autograd.has_torch_function((F.ones(1), 2.0))
    assert autograd.has_torch_function((F.ones(1), _Logged()))


def test_handle_torch_function_tries_subclasses_first():
    base, sub = _Logged(), _Declines()
    _Logged.calls = []
    result = autograd.handle_torch_function(_public, (base, sub), base, y=sub)
    assert result == "handled by _Logged"
    name, func, types, args, kwargs = _Logged.calls[0]
    assert func == "_public" and types == (_Declines, _Logged)
    assert args == (base,) and kwargs == {"y": sub}
    with pytest.raises(TypeError, match="no implementation found for"):
        autograd.handle_torch_function(_public, (sub,), sub)


# -- engine settings and profiler enumerations ----------------------------------------------


def test_multithreading_setting_function_context_and_decorator():
    assert autograd.is_multithreading_enabled() is True
    autograd.set_multithreading_enabled(False)
    assert autograd.is_multithreading_enabled() is False
    autograd.set_multithreading_enabled(True)
    with autograd.set_multithreading_enabled(False):
        assert autograd.is_multithreading_enabled() is False
    assert autograd.is_multithreading_enabled() is True

    @autograd.set_multithreading_enabled(False)
    def inside():
        return autograd.is_multithreading_enabled()

    assert autograd.is_multithreading_enabled() is True  # decorating changes nothing yet
    assert inside() is False and autograd.is_multithreading_enabled() is True
    # Backward is the same either way.
    x = t([1.0, 2.0])
    with autograd.set_multithreading_enabled(False):
        (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_fixed_engine_facts():
    assert autograd.is_view_replay_enabled() is False
    assert autograd.kineto_available() is True  # flambeau.profiler stands in for Kineto
    assert autograd.DeviceType.CPU == 0 and autograd.DeviceType.CUDA == 1
    assert autograd.DeviceType.PrivateUse1 == 20
    assert autograd.ProfilerActivity.CPU == 0 and autograd.ProfilerActivity.CUDA == 2
    assert autograd.ProfilerState.Disabled == 0 and autograd.ProfilerState.KINETO == 6


def test_gradient_layout_policy():
    # A permuted parameter: strides (1, 12, 4) over shape (4, 2, 3).
    p = F.empty(2, 3, 4, dtype=F.float64).permute(2, 0, 1).requires_grad_()
    (p * 2).sum().backward()
    assert p.grad.stride() == p.stride()  # the contract: the parameter's layout
    np.testing.assert_allclose(p.grad.numpy(), np.full((4, 2, 3), 2.0))
    p.grad = None
    with autograd.enforce_grad_layout_policy(False):
        (p * 2).sum().backward()  # the incoming gradient is contiguous, and kept so
    assert p.grad.stride() == (6, 3, 1)
    np.testing.assert_allclose(p.grad.numpy(), np.full((4, 2, 3), 2.0))
    # Accumulation keeps the existing tensor's layout.
    (p * 3).sum().backward()
    assert p.grad.stride() == (6, 3, 1)
    np.testing.assert_allclose(p.grad.numpy(), np.full((4, 2, 3), 5.0))
    # A parameter that is not dense (a broadcast view) gets a contiguous gradient.
    q = F.zeros(1, 3, dtype=F.float64).expand(2, 3).requires_grad_()
    (q * 1).sum().backward()
    assert q.grad.is_contiguous()


# -- leaf rules: requires_grad, detach_, retains_grad ---------------------------------------


def test_non_leaf_requires_grad_cannot_change():
    x = t([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf") as e:
        y.requires_grad_(False)
    assert "var.detach()" in str(e.value)
    with pytest.raises(RuntimeError, match="use var_no_grad = var.detach"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match=r"leaf variables\.$"):
        y.requires_grad = True
    assert y.requires_grad_() is y and y.requires_grad_(True) is y
    x.requires_grad = False  # a leaf may change
    assert not x.requires_grad
    x.requires_grad_(True)
    assert x.requires_grad


def test_detach_in_place_makes_a_leaf():
    x = t([1.0, 2.0])
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and y.is_leaf and not y.requires_grad
    z = (y * 3).sum()  # y is now a constant in new graphs
    assert not z.requires_grad
    y.requires_grad_()
    (y * 3).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        x[:1].detach_()


def test_retains_grad():
    x = t([1.0, 2.0])
    y = x * 2
    assert x.retains_grad is False and y.retains_grad is False
    y.retain_grad()
    assert y.retains_grad is True
    x.retain_grad()  # a leaf keeps its grad anyway: nothing to retain
    assert x.retains_grad is False
    with pytest.raises(AttributeError):
        y.retains_grad = False


# -- saved tensor hooks ---------------------------------------------------------------------


def test_saved_tensors_go_through_the_hooks():
    log = []

    def pack(x):
        log.append(("pack", tuple(x.shape)))
        return x.clone()

    def unpack(x):
        log.append(("unpack",))
        return x

    x = t([1.0, 2.0])
    with graph.saved_tensors_hooks(pack, unpack):
        y = x * x  # saves both operands
        _ = x + 1  # saves nothing
        assert log == [("pack", (2,))] * 2
        w = x.exp()  # saves its result (and, in flambeau, its input)
    n = len(log)
    log.clear()
    (y.sum() + w.sum()).backward()
    assert log == [("unpack",)] * n
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) + np.exp([1.0, 2.0]))


def test_the_saved_copy_is_what_backward_reads():
    x = t([1.0, 2.0])
    with graph.saved_tensors_hooks(lambda v: v.clone(), lambda v: v):
        y = x.clone()
        z = y * y
    y.add_(1)  # the hooks saved a copy: no error, and the old values are used
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_hooks_apply_to_custom_functions_and_only_the_innermost():
    outer, inner = [], []

    class Square(autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = t([3.0])
    with graph.saved_tensors_hooks(lambda v: outer.append(1) or v, lambda v: v):
        with graph.saved_tensors_hooks(lambda v: inner.append(1) or v * 10, lambda v: v):
            y = Square.apply(x)
    assert inner == [1] and outer == []
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [60.0])  # 2 * (10 * 3) * 1


def test_unpack_must_return_a_tensor():
    x = t([1.0])
    with graph.saved_tensors_hooks(lambda v: v, lambda v: None):
        y = x * x
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.backward()


def test_disable_saved_tensors_hooks():
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda v: v, lambda v: v):
                pass
    with graph.saved_tensors_hooks(lambda v: v, lambda v: v):
        with pytest.raises(RuntimeError, match="hooks are set"):
            with graph.disable_saved_tensors_hooks("hooks are set"):
                pass
    with graph.saved_tensors_hooks(lambda v: v, lambda v: v):  # usable again after
        pass


def test_save_on_cpu():
    x = t([1.0, 2.0, 3.0])
    with graph.save_on_cpu():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


# -- register_multi_grad_hook ---------------------------------------------------------------


def test_multi_grad_hook_all():
    a, b, c = t([1.0, 1.0]), t([1.0, 1.0]), t([1.0, 1.0])
    calls = []
    handle = graph.register_multi_grad_hook(
        (a, b, c), lambda grads: calls.append([None if g is None else g.tolist() for g in grads])
    )
    (a * 2 + b * 3).sum().backward()
    assert calls == [[[2.0, 2.0], [3.0, 3.0], None]]  # c is not in the graph
    (a * 2).sum().backward()
    assert calls[-1] == [[2.0, 2.0], None, None]
    handle.remove()
    (a * 2).sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_on_non_leaves_and_any():
    a = t([1.0, 1.0])
    y = a * 2
    calls = []
    graph.register_multi_grad_hook((y, a), lambda grads: calls.append([g.tolist() for g in grads]))
    (y * 3).sum().backward()
    assert calls == [[[3.0, 3.0], [6.0, 6.0]]]
    b, c = t([1.0]), t([1.0])
    first = []
    graph.register_multi_grad_hook((b, c), lambda g: first.append(g.tolist()), mode="any")
    (b * 2 + c * 3).sum().backward()
    assert len(first) == 1 and first[0] in ([2.0], [3.0])


def test_multi_grad_hook_checks():
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        graph.register_multi_grad_hook((t([1.0]),), lambda g: None, mode="x")
    with pytest.raises(AssertionError, match="does not require grad"):
        graph.register_multi_grad_hook((t([1.0]), t([1.0], False)), lambda g: None)


# -- Node API and NestedIOFunction ----------------------------------------------------------


def test_node_api():
    x, w = t([1.0, 2.0]), t([3.0, 4.0])
    y = x * w
    fn = y.grad_fn
    assert isinstance(fn, graph.Node) and fn.name() == "MulBackward0"
    assert type(fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}
    seen = []
    handle = fn.register_hook(lambda gin, gout: seen.append(len(gin)))
    y.sum().backward(retain_graph=True)
    handle.remove()
    y.sum().backward()
    assert seen == [2]


class _Nested(autograd.NestedIOFunction):
    def forward_extended(self, x, pair):
        self.save_for_backward(x, (pair[0],))
        return x * 2, (pair[0] * pair[1],)

    def backward_extended(self, grad_x, grad_pair):
        x, (y,) = self.saved_tensors
        (g,) = grad_pair
        return grad_x * 2, (g * self._z, None)


def test_nested_io_function():
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    z = t([5.0, 6.0], requires_grad=False)
    fn = _Nested()
    fn._z = z
    out, (prod,) = fn(x, (y, z))
    np.testing.assert_allclose(out.detach().numpy(), [2.0, 4.0])
    np.testing.assert_allclose(prod.detach().numpy(), [15.0, 24.0])
    assert out.grad_fn is prod.grad_fn and out.grad_fn.name() == "_NestedBackward"
    (out.sum() + (prod * prod).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    # d/dy (y z)^2 = 2 y z * z
    np.testing.assert_allclose(y.grad.numpy(), 2 * np.array([15.0, 24.0]) * [5.0, 6.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()


def test_nested_io_function_rejects_unknown_inputs():
    with pytest.raises(ValueError, match="doesn't know how to iterate"):
        _Nested()(t([1.0]), (t([1.0]), "text"))


def test_no_warnings_from_new_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ["Variable", "NestedIOFunction", "graph", "DeviceType", "is_tensor_like"]:
            getattr(autograd, name)


def test_output_nr_names_the_output_of_a_multi_output_op():
    x = F.ones(4, requires_grad=True)
    first, second = x.split(2)
    assert (first.output_nr, second.output_nr, x.output_nr) == (0, 1, 0)
