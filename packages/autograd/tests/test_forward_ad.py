"""flambeau.autograd.forward_ad: tangents against central finite differences (and,
where torch is installed, against torch.autograd.forward_ad), and PyTorch's API rules."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
import flambeau.autograd.forward_ad as fwAD
from flambeau.autograd import Function, once_differentiable

# ---- the functions checked ---------------------------------------------------------------
# Each takes the flambeau (or torch) module first, so that the torch oracle runs the same
# code; inputs are float64 arrays.

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
W1 = np.array([[0.2, -0.4, 0.1], [0.7, 0.3, -0.5], [-0.6, 0.8, 0.9], [0.05, -0.2, 0.4]])
B1 = np.array([0.1, -0.2, 0.3, 0.0])
W2 = np.array([[0.3, -0.1, 0.6, 0.2], [-0.5, 0.4, 0.1, 0.7]])


def _const(lib, a):
    return lib.tensor(a, dtype=lib.float64)


def small_net(lib, x):
    """A two-layer perceptron with a log-softmax head, written with plain operators."""
    h = lib.tanh(x @ _const(lib, W1).T + _const(lib, B1))
    logits = h @ _const(lib, W2).T
    return logits - lib.log(lib.exp(logits).sum(dim=-1, keepdim=True))


UNARY = {
    "elementwise": lambda lib, x: lib.sin(x) * lib.exp(x) + x**3 / (1 + x**2),
    "tanh_sigmoid": lambda lib, x: lib.tanh(x) - lib.sigmoid(2 * x),
    "matmul_left": lambda lib, x: x @ _const(lib, A).T,
    "matmul_self": lambda lib, x: x.T @ x,
    "sum_dim": lambda lib, x: (x * x).sum(dim=1),
    "mean": lambda lib, x: lib.exp(x).mean(),
    "prod": lambda lib, x: x.prod(dim=0),
    "amax": lambda lib, x: (x * _const(lib, A)).amax(dim=1),
    "norm": lambda lib, x: lib.linalg.vector_norm(x),
    "views": lambda lib, x: x.transpose(0, 1).reshape(-1)[1:5] * 2,
    "slice_expand": lambda lib, x: x[:, 1:].unsqueeze(0).expand(3, 2, 2).sum(0),
    "permute_flatten": lambda lib, x: lib.flatten(x.unsqueeze(-1).permute(2, 1, 0)),
    "softmax": lambda lib, x: lib.softmax(x, dim=-1),
    "log_softmax": lambda lib, x: lib.log_softmax(x * 3, dim=0),
    "logsumexp": lambda lib, x: lib.logsumexp(x, dim=1),
    "small_net": small_net,
    "cat_stack": lambda lib, x: lib.cat([x, lib.stack([x[0], x[1] ** 2])], dim=0),
}

X = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.5]])
T = np.array([[1.0, 0.5, -2.0], [0.25, -1.0, 0.75]])


def finite_difference(f, x, t, eps=1e-6):
    """(f(x + eps t) - f(x - eps t)) / (2 eps), in float64."""
    plus = f(F, F.tensor(x + eps * t)).numpy()
    minus = f(F, F.tensor(x - eps * t)).numpy()
    return (plus - minus) / (2 * eps)


def forward_tangent(f, x, t):
    with fwAD.dual_level():
        out = f(F, fwAD.make_dual(F.tensor(x), F.tensor(t)))
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


@pytest.mark.parametrize("name", sorted(UNARY))
def test_tangents_match_finite_differences(name):
    f = UNARY[name]
    primal, tangent = forward_tangent(f, X, T)
    np.testing.assert_allclose(primal.numpy(), f(F, F.tensor(X)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), finite_difference(f, X, T), rtol=1e-6, atol=1e-8)
    assert not primal.requires_grad and not tangent.requires_grad


def test_two_dual_inputs_sum_their_contributions():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.2, -0.3])
    tx, ty = np.array([1.0, 0.0, -1.0]), np.array([0.5, 2.0, 1.0])
    with fwAD.dual_level():
        dx = fwAD.make_dual(F.tensor(x), F.tensor(tx))
        dy = fwAD.make_dual(F.tensor(y), F.tensor(ty))
        out = F.sin(dx) * dy + dx / (1 + dy**2)
        tangent = fwAD.unpack_dual(out).tangent
        tangent_x_only = fwAD.unpack_dual(dx * 3).tangent
    # d/dx = cos(x) y + 1 / (1 + y^2); d/dy = sin(x) - 2 x y / (1 + y^2)^2
    expected = (np.cos(x) * y + 1 / (1 + y**2)) * tx + (
        np.sin(x) - 2 * x * y / (1 + y**2) ** 2
    ) * ty
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tangent_x_only.numpy(), 3 * tx)


def test_outputs_independent_of_the_dual_have_no_tangent():
    x = F.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, F.ones(2))
        other = F.tensor([3.0, 4.0], requires_grad=True)
        assert fwAD.unpack_dual(other * 2).tangent is None
        assert fwAD.unpack_dual(F.ones(2)).tangent is None
        assert fwAD.unpack_dual(d.detach() * 2).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None  # integer output
        # Dependent, with a derivative that is zero everywhere: zeros, as PyTorch gives.
        assert fwAD.unpack_dual(F.floor(d)).tangent.tolist() == [0.0, 0.0]


def test_unpack_dual_of_a_dual_returns_its_tangent_as_given():
    x, t = F.tensor([1.0, 2.0]), F.tensor([0.5, -0.5], dtype=F.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)  # a float64 tangent for a float32 primal is allowed
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is t
        assert primal.tolist() == [1.0, 2.0] and not primal.requires_grad
        assert fwAD.unpack_dual(d * 2).tangent.tolist() == [1.0, -1.0]


def test_primal_values_and_memory_are_unchanged():
    x = F.tensor([1.0, 2.0, 3.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, F.ones(3))
        assert d.tolist() == [1.0, 2.0, 3.0] and d.data_ptr() == x.data_ptr()
        out = (d * d).sum()
        primal = fwAD.unpack_dual(out).primal
    assert x.tolist() == [1.0, 2.0, 3.0] and x.grad_fn is None and not x.requires_grad
    assert primal.item() == 14.0


def test_in_place_changes_of_a_dual_and_of_intermediates_carry_the_tangent():
    x = F.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, F.tensor([1.0, 0.5]))
        d.mul_(3)  # the dual aliases x: x changes too, as in PyTorch
        assert x.tolist() == [3.0, 6.0]
        assert fwAD.unpack_dual(d).tangent.tolist() == [3.0, 1.5]
        y = d * 1
        y.add_(y)
        y[0] = 7.0
        assert fwAD.unpack_dual(y).tangent.tolist() == [0.0, 3.0]


def test_leaving_the_level_drops_tangents_and_graphs():
    x = F.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, F.ones(2))
        out = d * 2
        assert fwAD.unpack_dual(out).tangent is not None
    assert fwAD.unpack_dual(out).tangent is None
    assert fwAD.unpack_dual(d).tangent is None
    assert not d.requires_grad and d.grad_fn is None  # the dual is a plain tensor again
    primal = fwAD.unpack_dual(out).primal
    assert not primal.requires_grad and primal.tolist() == [2.0, 4.0]
    # A new level starts empty.
    with fwAD.dual_level():
        assert fwAD.unpack_dual(out).tangent is None


def test_primal_keeps_only_the_graph_the_caller_built():
    x = F.tensor([1.0, 2.0], requires_grad=True)
    t = F.tensor([1.0, 0.5])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        out = (d * d).sum()
        primal, tangent = fwAD.unpack_dual(out)
        assert primal.item() == 5.0 and primal.requires_grad  # x requires grad
        assert tangent.item() == pytest.approx(2 * 1 * 1 + 2 * 2 * 0.5)
        # The tangent sum(2 x t) is differentiable with respect to x: 2 t. (Its graph
        # shares the primal's: the primal's backward below needs it kept.)
        (g,) = F.autograd.grad(tangent, x, retain_graph=True)
        assert g.tolist() == [2.0, 1.0]
        primal.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_tangent_is_differentiable_with_respect_to_a_tangent_that_requires_grad():
    x = F.tensor([1.0, 2.0])
    t = F.tensor([1.0, 0.5], requires_grad=True)
    with fwAD.dual_level():
        out = (fwAD.make_dual(x, t) ** 2).sum()
        primal, tangent = fwAD.unpack_dual(out)
    assert not primal.requires_grad and tangent.requires_grad
    (g,) = F.autograd.grad(tangent, t)
    assert g.tolist() == [2.0, 4.0]  # d/dt sum(2 x t) = 2 x


def test_levels_and_their_errors():
    assert fwAD.enter_dual_level() == 0
    try:
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
    finally:
        assert fwAD.exit_dual_level() is None
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as level:
        assert level == 0


def test_dual_level_decorates_a_function():
    @fwAD.dual_level()
    def tangent_of_square(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) ** 2).tangent

    assert tangent_of_square(F.tensor([3.0]), F.tensor([1.0])).tolist() == [6.0]
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(F.ones(1), F.ones(1))  # the decorator left its level


def test_make_dual_errors_are_pytorchs():
    x = F.ones(2)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, F.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward"):
            fwAD.make_dual(x, F.ones(3))
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(F.ones(2, 2), F.ones(2))  # no broadcasting
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(F.tensor([1, 2]), F.ones(2))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(x, F.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, F.ones(2), level=1)
        assert fwAD.unpack_dual(x, level=1).tangent is None  # a plain tensor: no check
        d = fwAD.make_dual(x, F.ones(2))
        with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
            fwAD.unpack_dual(d * 2, level=1)
        already = "already has a forward gradient at the same level 0 is not supported"
        with pytest.raises(RuntimeError, match=already):
            fwAD.make_dual(d, F.ones(2))
        with pytest.raises(RuntimeError, match=already):
            fwAD.make_dual(d * 2, F.ones(2))
        assert fwAD.unpack_dual(x, level=0).tangent is None


def test_unpacked_dual_tensor_is_a_namedtuple():
    u = fwAD.unpack_dual(F.ones(1))
    assert isinstance(u, fwAD.UnpackedDualTensor) and isinstance(u, tuple)
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")
    assert u.tangent is None and u[1] is None
    assert F.autograd.forward_ad is fwAD


def test_complex_tangents():
    x = F.tensor([1.0 + 2.0j, -0.5j])
    t = F.tensor([1.0 + 0.0j, 2.0 - 1.0j])
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fwAD.make_dual(x, t) ** 2).tangent
    # holomorphic: d(x^2) = 2 x t
    np.testing.assert_allclose(tangent.numpy(), 2 * x.numpy() * t.numpy(), rtol=1e-6)


# ---- custom autograd.Function --------------------------------------------------------------


class MulWithJvp(Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        ctx.k = k
        return x * y * k

    @staticmethod
    def jvp(ctx, x_t, y_t, k_t):
        assert k_t is None  # not a tensor
        x, y = ctx.saved_tensors  # what save_for_forward saved
        return ctx.k * (x_t * y + x * y_t)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return ctx.k * grad * y, ctx.k * grad * x, None


class SinOnlyJvp(Function):
    """A jvp and no backward: forward mode must not need one."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x.sin()

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x.cos() * x_t


def test_custom_function_jvp_gives_the_tangent():
    x, y = F.tensor([1.0, 2.0]), F.tensor([3.0, -1.0])
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, F.tensor([1.0, 1.0]))
        out = MulWithJvp.apply(dx, y, 2.0)
        assert out.tolist() == [6.0, -4.0]
        # y has no tangent: jvp received zeros for it.
        assert fwAD.unpack_dual(out).tangent.tolist() == [6.0, -2.0]
        # Operations after it chain onto its tangent; SinOnlyJvp is never differentiated
        # by reverse mode (it has no backward).
        z = SinOnlyJvp.apply(dx * 2) * 3
        expected = 3 * np.cos(2 * x.numpy()) * 2
        np.testing.assert_allclose(fwAD.unpack_dual(z).tangent.numpy(), expected, rtol=1e-6)
        both = MulWithJvp.apply(SinOnlyJvp.apply(dx), dx, 1.0)
        # d(sin(x) x) = (cos(x) x + sin(x)) t
        expected = np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())
        np.testing.assert_allclose(fwAD.unpack_dual(both).tangent.numpy(), expected, rtol=1e-6)


def test_custom_function_with_jvp_keeps_reverse_mode():
    a = F.tensor(1.0, dtype=F.float64, requires_grad=True)
    b = F.tensor(2.0, dtype=F.float64, requires_grad=True)
    with fwAD.dual_level():
        d = MulWithJvp.apply(fwAD.make_dual(a, F.tensor(1.0, dtype=F.float64)), b, 4)
        primal, tangent = fwAD.unpack_dual(d)
        assert primal.item() == 8.0 and tangent.item() == 8.0
        d.backward()
    assert a.grad.item() == 8.0 and b.grad.item() == 4.0


def test_custom_function_without_jvp():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class DoubleOnce(Double):
        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            return grad * 2

    with fwAD.dual_level():
        d = fwAD.make_dual(F.tensor([1.0, 2.0]), F.tensor([1.0, -1.0]))
        # A differentiable backward gives the tangent (PyTorch requires a jvp here).
        assert fwAD.unpack_dual(Double.apply(d)).tangent.tolist() == [2.0, -2.0]
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            DoubleOnce.apply(d)  # it would silently give zeros
        assert DoubleOnce.apply(F.ones(1)).tolist() == [2.0]  # no dual: as usual


def test_save_for_forward_and_the_default_jvp():
    class SavesInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x * 1

    with pytest.raises(AssertionError, match="save_for_forward expects all arguments"):
        SavesInt.apply(F.ones(1))
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        Function.jvp(None, F.ones(1))


# ---- against PyTorch -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNARY))
def test_tangents_match_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fwAD

    f = UNARY[name]
    with torch_fwAD.dual_level():
        out = f(torch, torch_fwAD.make_dual(torch.tensor(X), torch.tensor(T)))
        expected = torch_fwAD.unpack_dual(out).tangent.numpy()
    _, tangent = forward_tangent(f, X, T)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_mixed_with_reverse_mode_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fwAD

    def run(lib, ad):
        x = lib.tensor(X, requires_grad=True)
        with ad.dual_level():
            out = small_net(lib, ad.make_dual(x, lib.tensor(T)))
            primal, tangent = ad.unpack_dual(out)
            (tangent.sum() + primal.sum()).backward()
        return primal.detach().numpy(), tangent.detach().numpy(), x.grad.numpy()

    for mine, theirs in zip(run(F, fwAD), run(torch, torch_fwAD)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
