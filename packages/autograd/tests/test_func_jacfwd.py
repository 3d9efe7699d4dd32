"""flambeau.func.jacfwd: column by column (one Jacobian-vector product per input element),
checked against finite differences, hand-derived Jacobians, jacrev and (when installed)
PyTorch's torch.func.jacfwd."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
import flambeau.func as ff
from flambeau.func import _autodiff


def t64(shape, seed):
    return F.from_numpy(np.random.default_rng(seed).uniform(-1.0, 1.0, shape))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def finite_difference_jacobian(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of fn (NumPy float64 in, NumPy out): shape out.shape + x.shape."""
    out = np.asarray(fn(x))
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        jac[(...,) + idx] = (np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * eps)
    return jac


def on_numpy(fn):
    return lambda a: fn(F.from_numpy(a)).numpy()


@pytest.fixture(autouse=True, params=["auto", "columns"])
def path(request, monkeypatch):
    """Each test runs as jacfwd chooses (by rows for a square or wide Jacobian) and with
    the column-by-column path forced, so that it is checked on every shape."""
    if request.param == "columns":
        monkeypatch.setattr(_autodiff, "_prefer_columns", lambda flat_out, xs: True)
    return request.param


# ---- values ---------------------------------------------------------------------------------


def test_tall_jacobian_matches_finite_differences_and_hand_derivation():
    # 300 outputs of 4 inputs: the shape jacfwd is for
    w = t64((300, 4), 1)
    x = t64((4,), 2)

    def f(a):
        return F.tanh(w @ a) * a.sum() + a[0] ** 2

    jac = ff.jacfwd(f)(x)
    assert tuple(jac.shape) == (300, 4)
    wn, xn = w.numpy(), x.numpy()
    h = np.tanh(wn @ xn)
    # d/dx [tanh(Wx) s(x) + x0^2] = diag(1 - tanh^2) W s + tanh 1^T + 2 x0 e0^T
    expected = (1 - h**2)[:, None] * wn * xn.sum() + h[:, None]
    expected[:, 0] += 2 * xn[0]
    close(jac.numpy(), expected)
    close(jac.numpy(), finite_difference_jacobian(on_numpy(f), xn), tol=1e-6)
    close(jac.numpy(), ff.jacrev(f)(x).numpy())


def test_matrix_input_and_output_shapes():
    m = t64((2, 3), 3)

    def f(a):
        return (a @ a.T).sin()

    jac = ff.jacfwd(f)(m)
    assert tuple(jac.shape) == (2, 2, 2, 3)
    close(jac.numpy(), finite_difference_jacobian(on_numpy(f), m.numpy()), tol=1e-6)
    close(jac.numpy(), ff.jacrev(f)(m).numpy())
    # scalar in, scalar out
    s = F.tensor(0.3, dtype=F.float64)
    close(ff.jacfwd(F.sin)(s).item(), np.cos(0.3))


def test_argnums_int_negative_and_tuple():
    x, y = t64((3,), 4), t64((5,), 5)

    def f(a, b):
        return F.outer(b, a.exp())  # (5, 3): d/da = b_i exp(a_j) delta_jk; d/db = exp(a_j) delta_ik

    xn, yn = x.numpy(), y.numpy()
    da = np.einsum("i,j,jk->ijk", yn, np.exp(xn), np.eye(3))
    db = np.einsum("j,ik->ijk", np.exp(xn), np.eye(5))
    close(ff.jacfwd(f)(x, y).numpy(), da)
    close(ff.jacfwd(f, argnums=1)(x, y).numpy(), db)
    close(ff.jacfwd(f, argnums=-1)(x, y).numpy(), db)
    both = ff.jacfwd(f, argnums=(0, 1))(x, y)
    assert isinstance(both, tuple) and len(both) == 2
    close(both[0].numpy(), da)
    close(both[1].numpy(), db)
    single = ff.jacfwd(f, argnums=(1,))(x, y)
    assert isinstance(single, tuple) and len(single) == 1
    close(single[0].numpy(), db)


def test_has_aux():
    x = t64((4,), 6)

    def f(a):
        y = a**3
        return y, {"y": y, "n": 7}

    jac, aux = ff.jacfwd(f, has_aux=True)(x)
    close(jac.numpy(), np.diag(3 * x.numpy() ** 2))
    close(aux["y"].numpy(), x.numpy() ** 3)
    assert aux["n"] == 7
    assert not jac.requires_grad and not aux["y"].requires_grad


def test_pytree_inputs_and_outputs():
    x, y = t64((3,), 7), t64((2,), 8)

    def f(d):
        a, b = d["a"], d["b"][0]
        return {"p": a * b.sum(), "q": (a.sum() * b, b**2)}

    jac = ff.jacfwd(f)({"a": x, "b": (y,)})
    ref = ff.jacrev(f)({"a": x, "b": (y,)})
    xn, yn = x.numpy(), y.numpy()
    # the result nests as the output, each leaf nesting as the input
    assert set(jac) == {"p", "q"} and set(jac["p"]) == {"a", "b"}
    close(jac["p"]["a"].numpy(), np.eye(3) * yn.sum())
    close(jac["p"]["b"][0].numpy(), np.broadcast_to(xn[:, None], (3, 2)))
    close(jac["q"][0]["a"].numpy(), np.broadcast_to(yn[:, None], (2, 3)))
    close(jac["q"][0]["b"][0].numpy(), np.eye(2) * xn.sum())
    close(jac["q"][1]["a"].numpy(), np.zeros((2, 3)))
    close(jac["q"][1]["b"][0].numpy(), np.diag(2 * yn))
    flat = F.utils._pytree.tree_leaves(jac)
    flat_ref = F.utils._pytree.tree_leaves(ref)
    assert len(flat) == len(flat_ref) == 6
    for a, b in zip(flat, flat_ref):
        close(a.numpy(), b.numpy())
    # tuple argnums and a tuple output: per output, a tuple per argnum
    out = ff.jacfwd(lambda a, b: (a * 2, (a.sum() * b,)), argnums=(0, 1))(x, y)
    close(out[0][0].numpy(), 2 * np.eye(3))
    close(out[0][1].numpy(), np.zeros((3, 2)))
    close(out[1][0][0].numpy(), np.broadcast_to(yn[:, None], (2, 3)))
    close(out[1][0][1].numpy(), np.eye(2) * xn.sum())


def test_unreached_and_non_differentiable_outputs():
    x = t64((3,), 9)
    # an output independent of the input: zeros, the output's dtype
    j = ff.jacfwd(lambda a: F.ones(2, dtype=F.float32))(x)
    assert tuple(j.shape) == (2, 3) and j.dtype == F.float32
    close(j.numpy(), np.zeros((2, 3)))
    # an integer output: zeros of its dtype (a tangent has its output's dtype)
    jf, ji = ff.jacfwd(lambda a: (a * 2, a.argmax()))(x)
    close(jf.numpy(), 2 * np.eye(3))
    assert ji.dtype == F.int64 and tuple(ji.shape) == (3,) and not ji.any()
    # derivative zero everywhere
    close(ff.jacfwd(lambda a: a.round() + a.sign())(x).numpy(), np.zeros((3, 3)))
    # a float64 input, float32 output: the Jacobian is float32
    j32 = ff.jacfwd(lambda a: (a.sin() * 3).float())(x)
    assert j32.dtype == F.float32
    close(j32.numpy(), np.diag(3 * np.cos(x.numpy())), tol=1e-6)
    # float32 throughout, a tall Jacobian
    w = t64((100, 3), 21).float()
    j = ff.jacfwd(lambda a: F.tanh(w @ a))(x.float())
    assert j.dtype == F.float32
    close(j.numpy(), ff.jacrev(lambda a: F.tanh(w @ a))(x.float()).numpy(), tol=1e-6)
    # empty input and output
    assert tuple(ff.jacfwd(lambda a: a[:0] * 2)(x).shape) == (0, 3)


# ---- composition -----------------------------------------------------------------------------


def test_hessian_and_jacfwd_of_jacrev_of_a_residual():
    t = F.linspace(0, 1, 200, dtype=F.float64)
    p = F.tensor([1.0, 0.5, 0.8, 2.9, 0.1], dtype=F.float64)

    def res(q):
        return q[0] * F.exp(-q[1] * t) + q[2] * F.sin(q[3] * t + q[4])

    second = ff.jacfwd(ff.jacrev(res))(p)
    assert tuple(second.shape) == (200, 5, 5)
    tn, pn = t.numpy(), p.numpy()
    e, arg = np.exp(-pn[1] * tn), pn[3] * tn + pn[4]
    s, c = np.sin(arg), np.cos(arg)
    expected = np.zeros((200, 5, 5))
    expected[:, 0, 1] = expected[:, 1, 0] = -tn * e
    expected[:, 1, 1] = pn[0] * tn**2 * e
    expected[:, 2, 3] = expected[:, 3, 2] = tn * c
    expected[:, 2, 4] = expected[:, 4, 2] = c
    expected[:, 3, 3] = -pn[2] * tn**2 * s
    expected[:, 3, 4] = expected[:, 4, 3] = -pn[2] * tn * s
    expected[:, 4, 4] = -pn[2] * s
    close(second.numpy(), expected)
    close(ff.jacrev(ff.jacfwd(res))(p).numpy(), expected)
    close(ff.jacfwd(ff.jacfwd(res))(p).numpy(), expected)
    close(ff.hessian(lambda q: (res(q) ** 2).sum())(p).numpy(),
          ff.jacrev(ff.jacrev(lambda q: (res(q) ** 2).sum()))(p).numpy())  # fmt: skip


def test_hessian_argnums_and_quadratic_form():
    a = t64((4, 4), 10)
    x, y = t64((4,), 11), t64((4,), 12)
    close(ff.hessian(lambda v: v @ a @ v)(x).numpy(), a.numpy() + a.numpy().T)
    # d2/dy2 of (x . y)^2 = 2 x x^T
    h = ff.hessian(lambda u, v: (u @ v) ** 2, argnums=1)(x, y)
    close(h.numpy(), 2 * np.outer(x.numpy(), x.numpy()))


def test_vmap_of_jacfwd_gives_per_sample_jacobians():
    xs = t64((5, 3), 13)
    js = ff.vmap(ff.jacfwd(lambda a: a.sin() * a.sum()))(xs)
    assert tuple(js.shape) == (5, 3, 3)
    for i in range(5):
        xn = xs.numpy()[i]
        close(js[i].numpy(), np.diag(np.cos(xn) * xn.sum()) + np.sin(xn)[:, None])


def test_jacfwd_stays_on_the_callers_graph():
    # an input that requires grad: the Jacobian is differentiable with respect to it
    x = t64((3,), 14).requires_grad_(True)
    jac = ff.jacfwd(lambda a: a**3)(x)
    assert jac.requires_grad
    (g,) = F.autograd.grad(jac.sum(), x)
    close(g.detach().numpy(), 6 * x.detach().numpy())
    # a captured tensor that requires grad
    w = t64((3,), 15).requires_grad_(True)
    xd = x.detach()
    jac = ff.jacfwd(lambda a: w * a**2)(xd)
    (gw,) = F.autograd.grad(jac.sum(), w)
    close(gw.numpy(), 2 * xd.numpy())
    # grad of a function of jacfwd
    out = ff.grad(lambda a: ff.jacfwd(lambda b: b**3)(a).sum())(xd)
    close(out.numpy(), 6 * xd.numpy())


# ---- cost and fallback -------------------------------------------------------------------------


class _CountingSquare(F.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        _CountingSquare.calls += 1
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def test_cost_does_not_grow_with_the_number_of_outputs():
    x = t64((3,), 16)
    w = t64((400, 3), 17)
    _CountingSquare.calls = 0
    jac = ff.jacfwd(lambda a: w @ _CountingSquare.apply(a))(x)
    close(jac.numpy(), w.numpy() * 2 * x.numpy())
    # one backward through the function builds J^T u; the columns differentiate that
    assert _CountingSquare.calls <= 1 + x.numel()
    _CountingSquare.calls = 0
    ff.jacrev(lambda a: w @ _CountingSquare.apply(a))(x)
    assert _CountingSquare.calls == 400  # reverse mode: one per output


class _OnceSquare(F.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @F.autograd.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def test_falls_back_to_reverse_mode_for_a_once_differentiable_backward():
    x = t64((3,), 18)
    jac = ff.jacfwd(lambda a: _OnceSquare.apply(a) + a.sin())(x)
    close(jac.numpy(), np.diag(2 * x.numpy() + np.cos(x.numpy())))
    jac = ff.jacfwd(lambda a, b: _OnceSquare.apply(a) * b, argnums=(0, 1))(x, x.exp())
    close(jac[0].numpy(), np.diag(2 * x.numpy() * np.exp(x.numpy())))
    close(jac[1].numpy(), np.diag(x.numpy() ** 2))


# ---- errors ------------------------------------------------------------------------------------


def test_errors_are_pytorchs():
    x = t64((3,), 19)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        ff.jacfwd(F.sin, argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        ff.jacfwd(F.sin, argnums=())(x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        ff.jacfwd(lambda a, b: a, argnums=(0, 0))(x, x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        ff.jacfwd(F.sin, argnums=1.0)(x)
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        ff.jacfwd(F.sin, has_aux=True)(x)
    with pytest.raises(RuntimeError, match=r"has non-empty output \(got output = \[\]\)"):
        ff.jacfwd(lambda a: ())(x)
    with pytest.raises(RuntimeError, match=r"non-empty output \(got output = \[None\]\)"):
        ff.jacfwd(lambda a: None)(x)
    with pytest.raises(RuntimeError, match="to return only tensors"):
        ff.jacfwd(lambda a: (a, 3.0))(x)
    with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
        ff.jacfwd(lambda a: a * 2)(F.tensor([1, 2]))
    with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
        ff.jvp(lambda a: a * 2, (F.tensor([1, 2]),), (F.tensor([1, 2]),))
    with pytest.raises(RuntimeError, match="Expected all inputs to be real"):
        ff.jacfwd(F.sin)(F.ones(2, dtype=F.complex64))
    with pytest.raises(RuntimeError, match="Expected all outputs to be real"):
        ff.jacfwd(lambda a: a * 1j)(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ff.jacfwd(F.sin, randomness="sometimes")(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.jacfwd(lambda a: a + F.rand(3, dtype=F.float64))(x)
    # jacfwd itself draws nothing from the global generator
    state = F.get_rng_state()
    ff.jacfwd(lambda a: a.sin() * a.sum())(x)
    assert bool(F.equal(F.get_rng_state(), state))
    # an integer argument not differentiated is fine
    close(ff.jacfwd(lambda a, n: a * n)(x, F.tensor([1, 2, 3])).numpy(), np.diag([1, 2, 3]))


# ---- PyTorch as an oracle ---------------------------------------------------------------------


def test_against_torch_func_jacfwd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(20)
    xn, yn, wn = rng.normal(size=4), rng.normal(size=2), rng.normal(size=(50, 4))

    def make(lib, w):
        def f(a, b):
            return {"u": lib.tanh(w @ a) * b[0], "v": (a.sum() * b**2, lib.exp(a[:2] * b))}

        return f

    fw, tw = F.from_numpy(wn), torch.from_numpy(wn)
    ours = make(F, fw)
    theirs = make(torch, tw)
    for argnums in (0, 1, (0, 1)):
        got = ff.jacfwd(ours, argnums=argnums)(F.from_numpy(xn), F.from_numpy(yn))
        want = torch.func.jacfwd(theirs, argnums=argnums)(
            torch.from_numpy(xn), torch.from_numpy(yn)
        )
        got_leaves = F.utils._pytree.tree_leaves(got)
        want_leaves = torch.utils._pytree.tree_leaves(want)
        assert len(got_leaves) == len(want_leaves)
        for g, w in zip(got_leaves, want_leaves):
            assert tuple(g.shape) == tuple(w.shape)
            close(g.numpy(), w.numpy())
    got = ff.jacfwd(ff.jacrev(lambda a: make(F, fw)(a, F.from_numpy(yn))["u"]))(F.from_numpy(xn))
    want = torch.func.jacfwd(torch.func.jacrev(lambda a: theirs(a, torch.from_numpy(yn))["u"]))(
        torch.from_numpy(xn)
    )
    close(got.numpy(), want.numpy())
