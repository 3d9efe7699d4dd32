"""flambeau.func (torch.func): transforms against hand-derived values and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
import flambeau.func as ff


def t64(shape, seed):
    return F.from_numpy(np.random.default_rng(seed).uniform(-1.0, 1.0, shape))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---- vmap ---------------------------------------------------------------------------------


def test_vmap_dot_is_rowwise_dot_and_torch_vmap_alias():
    x, y = t64((5, 3), 0), t64((5, 3), 1)
    expected = (x.numpy() * y.numpy()).sum(1)
    close(ff.vmap(F.dot)(x, y).numpy(), expected)
    assert F.vmap is ff.vmap
    close(F.vmap(F.dot)(x, y).numpy(), expected)
    assert F.func is ff


def test_vmap_in_dims_none_and_nonzero_and_kwargs():
    x, v = t64((3, 4), 2), t64((3,), 3)
    # dot of each column of x with the same vector: in_dims=(1, None)
    out = ff.vmap(F.dot, in_dims=(1, None))(x, v)
    close(out.numpy(), x.numpy().T @ v.numpy())
    # a Python scalar unmapped, a keyword argument passed through
    out = ff.vmap(lambda a, n, scale=1.0: a * n * scale, in_dims=(0, None))(v, 2, scale=3.0)
    close(out.numpy(), v.numpy() * 6)


def test_vmap_nested_pytree_in_dims_and_out_dims():
    a, b = t64((4, 2), 4), t64((2, 4), 5)

    def f(d, pair):
        return {"sum": d["a"] + d["b"], "prod": pair[0] * pair[1]}

    out = ff.vmap(f, in_dims=({"a": 0, "b": 1}, [0, None]), out_dims={"sum": 0, "prod": 1})(
        {"b": b, "a": a}, [a, F.tensor([1.0, 2.0], dtype=F.float64)]
    )
    close(out["sum"].numpy(), a.numpy() + b.numpy().T)
    assert tuple(out["prod"].shape) == (2, 4)
    close(out["prod"].numpy(), (a.numpy() * [1.0, 2.0]).T)
    # negative out_dims, and a tuple of outputs with one unmapped (None) output
    r, c = ff.vmap(lambda x: (x * 2, 7.0), out_dims=(-1, None))(a)
    close(r.numpy(), (2 * a.numpy()).T)
    assert c == 7.0


def test_vmap_unbatched_output_is_expanded():
    out = ff.vmap(lambda x: F.ones(2))(F.zeros(3))
    assert tuple(out.shape) == (3, 2)


def test_nested_vmap_is_outer_product():
    x, y = t64((3,), 6), t64((4,), 7)
    out = ff.vmap(ff.vmap(F.mul, in_dims=(None, 0)), in_dims=(0, None))(x, y)
    close(out.numpy(), np.outer(x.numpy(), y.numpy()))
    # batched matrix-vector product through two levels
    m, v = t64((2, 3, 4), 8), t64((2, 4), 9)
    out = ff.vmap(ff.vmap(F.dot, in_dims=(0, None)))(m, v)
    close(out.numpy(), np.einsum("bij,bj->bi", m.numpy(), v.numpy()))


def test_vmap_chunk_size_gives_same_result():
    x = t64((7, 3), 10)
    close(ff.vmap(F.sum, chunk_size=2)(x).numpy(), x.numpy().sum(1))
    with pytest.raises(ValueError, match=r"chunk_size should be None or greater than 0. \(got 0\)"):
        ff.vmap(F.sum, chunk_size=0)


def test_vmap_randomness_modes():
    x = F.zeros(4, 3)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        ff.vmap(lambda r: r + F.rand(3))(x)
    state = F.get_rng_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.vmap(lambda r: F.randn_like(r))(x)
    assert F.equal(F.get_rng_state(), state)  # the draw is undone
    F.manual_seed(0)
    diff = ff.vmap(lambda r: r + F.rand(3), randomness="different")(x).numpy()
    assert len({tuple(row) for row in diff}) == 4
    F.manual_seed(0)
    same = ff.vmap(lambda r: r + F.rand(3), randomness="same")(x).numpy()
    F.manual_seed(0)
    once = F.rand(3).numpy()
    for row in same:
        close(row, once)
    # nested: 'same' inside 'different' repeats a draw along the inner dimension only
    nested = ff.vmap(ff.vmap(lambda r: F.rand(()), randomness="same"), randomness="different")
    out = nested(x).numpy()
    assert (out == out[:, :1]).all() and len(set(out[:, 0])) == 4
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.vmap(ff.vmap(lambda r: F.rand(()), randomness="different"))(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ff.vmap(F.sum, randomness="sometimes")


def test_vmap_errors_follow_pytorch():
    with pytest.raises(ValueError, match=r"got sizes \[2, 3\] for the mapped dimension"):
        ff.vmap(F.dot)(F.ones(2, 3), F.ones(3, 3))
    with pytest.raises(ValueError, match="got no inputs"):
        ff.vmap(F.sum)()
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        ff.vmap(F.sum, in_dims=[0])(F.ones(3))
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        ff.vmap(F.sum, in_dims=(0, 0))(F.ones(3))
    with pytest.raises(ValueError, match=r"expected in_dim to satisfy -1 <= in_dim < 1"):
        ff.vmap(F.sum, in_dims=(1,))(F.ones(3))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        ff.vmap(lambda x, y: x)(F.ones(3), 2.0)
    with pytest.raises(ValueError, match="Expected at least one Tensor to vmap over"):
        ff.vmap(F.sum, in_dims=(None,))(F.ones(3))
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'float'>"):
        ff.vmap(lambda x: 1.0)(F.ones(3))
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        ff.vmap(lambda x: x * 2, out_dims=None)(F.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="out_dims is not compatible with the structure"):
        ff.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(F.ones(3))
    with pytest.raises(ValueError, match="`out_dims` must be an int, None"):
        ff.vmap(F.sum, out_dims="a")(F.ones(3))


def test_vmap_empty_batch_and_write_through():
    assert tuple(ff.vmap(F.sum)(F.zeros(0, 3)).shape) == (0,)
    assert tuple(ff.vmap(lambda x: x * 2, out_dims=1)(F.zeros(0, 3)).shape) == (3, 0)
    x = F.zeros(3, 2)
    ff.vmap(lambda r: r.add_(1.0))(x)
    close(x.numpy(), np.ones((3, 2)))


# ---- grad and friends ---------------------------------------------------------------------


def test_grad_analytic_and_argnums():
    x = t64((4,), 11)
    close(ff.grad(lambda x: (x.sin() * x).sum())(x).numpy(),
          np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()))  # fmt: skip
    y = t64((4,), 12)
    gx, gy = ff.grad(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(x, y)
    close(gx.numpy(), 2 * x.numpy() * y.numpy())
    close(gy.numpy(), x.numpy() ** 2)
    close(ff.grad(lambda a, b: (a * b).sum(), argnums=-1)(x, y).numpy(), x.numpy())
    # a pytree argument: its gradient has the same structure; an unused input gets zeros
    g = ff.grad(lambda d: (d["w"] ** 2).sum())({"w": x, "unused": y})
    close(g["w"].numpy(), 2 * x.numpy())
    close(g["unused"].numpy(), np.zeros(4))
    # keyword arguments are passed through and not differentiated
    close(ff.grad(lambda a, k=1.0: (a * k).sum())(x, k=3.0).numpy(), np.full(4, 3.0))


def test_grad_result_is_plain_and_has_aux():
    x = t64((3,), 13)
    g = ff.grad(lambda x: (x**2).sum())(x)
    assert not g.requires_grad and g.grad_fn is None
    g, aux = ff.grad(lambda x: ((x**2).sum(), {"double": x * 2}), has_aux=True)(x)
    close(g.numpy(), 2 * x.numpy())
    close(aux["double"].numpy(), 2 * x.numpy())
    assert not aux["double"].requires_grad
    g, (value, aux) = ff.grad_and_value(lambda x: ((x**2).sum(), 5), has_aux=True)(x)
    close(value.item(), (x.numpy() ** 2).sum())
    assert aux == 5 and not value.requires_grad
    with F.no_grad():  # grad is a transform: an outer no_grad does not stop it
        close(ff.grad(lambda x: (x**2).sum())(x).numpy(), 2 * x.numpy())


def test_grad_of_grad_and_outer_autograd():
    x = F.tensor(0.5, dtype=F.float64)
    d2 = ff.grad(ff.grad(lambda x: x.sin() * x**3))(x)
    v = 0.5
    close(d2.item(), -np.sin(v) * v**3 + 6 * np.cos(v) * v**2 + 6 * v * np.sin(v))
    d3 = ff.grad(ff.grad(ff.grad(lambda x: x**4)))(F.tensor(2.0, dtype=F.float64))
    close(d3.item(), 24 * 2.0)
    # grad composes with ordinary autograd: d/dw of grad_x (w * x^2).sum() = 2x
    w = t64((3,), 14).requires_grad_(True)
    x = t64((3,), 15)
    g = ff.grad(lambda x: (w * x * x).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    close(w.grad.numpy(), 2 * x.numpy())
    # perturbation confusion: inner derivative with respect to its own input only
    out = ff.grad(lambda a: ff.grad(lambda b: a * b)(a))(F.tensor(3.0, dtype=F.float64))
    close(out.item(), 1.0)


def test_grad_errors_follow_pytorch():
    x = F.ones(3)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        ff.grad(lambda x: x * 2)(x)
    with pytest.raises(RuntimeError, match="to return a Tensor, got <class 'float'>"):
        ff.grad(lambda x: 1.0)(x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
        ff.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        ff.grad(F.sum, argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        ff.grad(F.sum, argnums=(0, 0))(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        ff.grad(F.sum, argnums=())(x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        ff.grad(F.sum, argnums=0.0)(x)
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor"):
        ff.grad(lambda x: x)(1.0)


def test_per_sample_gradients_equal_a_loop():
    w = t64((3,), 16)
    xs, ys = t64((6, 3), 17), t64((6,), 18)

    def loss(w, x, y):
        return ((x * w).sum().tanh() - y) ** 2

    batched = ff.vmap(ff.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    for i in range(6):
        wi = w.detach().requires_grad_(True)
        (expected,) = F.autograd.grad(loss(wi, xs[i], ys[i]), wi)
        close(batched[i].numpy(), expected.numpy())
    # and differentiating through vmap: grad of a vmapped sum
    g = ff.grad(lambda w: ff.vmap(loss, in_dims=(None, 0, 0))(w, xs, ys).sum())(w)
    close(g.numpy(), batched.numpy().sum(0))


def test_vjp_and_errors():
    x = t64((3,), 19)
    out, vjp_fn = ff.vjp(lambda x: (x.exp(), x * 2), x)
    close(out[0].numpy(), np.exp(x.numpy()))
    ct = (F.ones(3, dtype=F.float64), F.full((3,), 0.5, dtype=F.float64))
    (g,) = vjp_fn(ct)
    close(g.numpy(), np.exp(x.numpy()) + 1.0)
    (g2,) = vjp_fn(ct)  # callable again
    close(g2.numpy(), g.numpy())
    out, vjp_fn, aux = ff.vjp(lambda a, b: (a * b, "aux"), x, x + 1, has_aux=True)
    ga, gb = vjp_fn(F.ones(3, dtype=F.float64))
    close(ga.numpy(), x.numpy() + 1)
    close(gb.numpy(), x.numpy())
    assert aux == "aux"
    _, vjp_fn = ff.vjp(lambda x: (x, x), x)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn(F.ones(3))
    with pytest.raises(RuntimeError, match="must be floating-point or complex Tensors"):
        ff.vjp(lambda x: x.long(), x)


def test_jvp_matches_finite_differences():
    x, y, v, u = t64((4,), 20), t64((4,), 21), t64((4,), 22), t64((4,), 23)

    def f(a, b):
        return (a.sin() * b.exp(), (a * b).sum())

    out, (t1, t2) = ff.jvp(f, (x, y), (v, u))
    close(out[0].numpy(), np.sin(x.numpy()) * np.exp(y.numpy()))
    eps = 1e-6
    plus, minus = f(x + eps * v, y + eps * u), f(x - eps * v, y - eps * u)
    close(t1.numpy(), ((plus[0] - minus[0]) / (2 * eps)).numpy(), tol=1e-7)
    close(t2.numpy(), ((plus[1] - minus[1]) / (2 * eps)).numpy(), tol=1e-7)
    assert not t1.requires_grad
    _, tangent, aux = ff.jvp(lambda a: (a**2, a.sum()), (x,), (v,), has_aux=True)
    close(tangent.numpy(), 2 * x.numpy() * v.numpy())
    close(aux.item(), x.numpy().sum())
    # an output that does not depend on the inputs: zeros, or an error with strict=True
    _, tangent = ff.jvp(lambda a: F.ones(2), (x,), (v,))
    close(tangent.numpy(), np.zeros(2))
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        ff.jvp(lambda a: F.ones(2), (x,), (v,), strict=True)
    w = x.detach().requires_grad_(True)  # requires grad, but not a function of the input
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        ff.jvp(lambda a: (a * 2, w * 3), (x,), (v,), strict=True)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        ff.jvp(F.sin, x, v)
    with pytest.raises(RuntimeError, match="to have the same python structure"):
        ff.jvp(F.sin, (x,), v)
    with pytest.raises(RuntimeError, match="different size than that of the original Tensor"):
        ff.jvp(F.sin, (x,), (F.ones(3, dtype=F.float64),))


def test_linearize_equals_jvp():
    x, v = t64((3,), 24), t64((3,), 25)
    out, jvp_fn = ff.linearize(lambda a: a.tanh() * a, x)
    close(out.numpy(), np.tanh(x.numpy()) * x.numpy())
    for tangent in (v, 2 * v):
        close(jvp_fn(tangent).numpy(), ff.jvp(lambda a: a.tanh() * a, (x,), (tangent,))[1].numpy())
    with pytest.raises(RuntimeError, match="doesn't match the shape"):
        jvp_fn(F.ones(2, dtype=F.float64))
    with pytest.raises(RuntimeError, match="to have the same argspec as the primals"):
        jvp_fn(v, v)


@pytest.mark.parametrize("jac", [ff.jacrev, ff.jacfwd], ids=["jacrev", "jacfwd"])
def test_jacobians_are_analytic(jac):
    x = t64((3,), 26)
    xn = x.numpy()
    # f(x) = sin(x) * sum(x): J = diag(cos(x) * sum(x)) + sin(x) 1^T
    expected = np.diag(np.cos(xn) * xn.sum()) + np.sin(xn)[:, None]
    close(jac(lambda a: a.sin() * a.sum())(x).numpy(), expected)
    # two inputs, a dict output: the result nests as the output, then as argnums
    y = t64((3,), 27)
    out = jac(lambda a, b: {"p": a * b, "s": (a * b).sum()}, argnums=(0, 1))(x, y)
    close(out["p"][0].numpy(), np.diag(y.numpy()))
    close(out["p"][1].numpy(), np.diag(xn))
    close(out["s"][0].numpy(), y.numpy())
    # matrix input: the Jacobian has shape out.shape + in.shape
    m = t64((2, 3), 28)
    jm = jac(lambda a: a.sum(0))(m)
    assert tuple(jm.shape) == (3, 2, 3)
    close(jm.numpy(), np.transpose(np.broadcast_to(np.eye(3), (2, 3, 3)), (1, 0, 2)))
    j, aux = jac(lambda a: (a * 2, a.sum()), has_aux=True)(x)
    close(j.numpy(), 2 * np.eye(3))
    close(aux.item(), xn.sum())
    assert not j.requires_grad
    with pytest.raises(RuntimeError, match="Expected all inputs to be real"):
        jac(F.sin)(F.ones(2, dtype=F.complex64))


def test_jacobian_options():
    with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0."):
        ff.jacrev(F.sin, chunk_size=0)
    x = t64((3,), 29)
    close(ff.jacrev(F.sin, chunk_size=1)(x).numpy(), np.diag(np.cos(x.numpy())))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.jacfwd(lambda a: a + F.rand(3, dtype=F.float64))(x)
    close(ff.jacfwd(lambda a: a + F.rand(3, dtype=F.float64), randomness="same")(x).numpy(),
          np.eye(3))  # fmt: skip
    # per-sample Jacobians: vmap over jacrev
    xs = t64((4, 3), 30)
    js = ff.vmap(ff.jacrev(lambda a: a**3))(xs)
    for i in range(4):
        close(js[i].numpy(), np.diag(3 * xs.numpy()[i] ** 2))


def test_hessian_of_quadratic_form_is_a_plus_a_transpose():
    a = t64((4, 4), 31)
    x = t64((4,), 32)
    h = ff.hessian(lambda v: v @ a @ v)(x)
    close(h.numpy(), a.numpy() + a.numpy().T)
    assert not h.requires_grad
    # a non-quadratic function: d2/dx2 of sum(x^3) = diag(6x)
    close(ff.hessian(lambda v: (v**3).sum())(x).numpy(), np.diag(6 * x.numpy()))


# ---- modules --------------------------------------------------------------------------------


def _linear(seed):
    from flambeau import nn

    F.manual_seed(seed)
    return nn.Linear(3, 2).double()


def test_functional_call_uses_given_parameters_and_leaves_module_alone():
    lin = _linear(0)
    weight0, bias0 = lin.weight.detach().clone(), lin.bias.detach().clone()
    w, b = t64((2, 3), 33), t64((2,), 34)
    x = t64((5, 3), 35)
    out = ff.functional_call(lin, {"weight": w, "bias": b}, (x,))
    close(out.numpy(), x.numpy() @ w.numpy().T + b.numpy())
    close(lin.weight.detach().numpy(), weight0.numpy())
    assert isinstance(lin.weight, F.nn.Parameter) and lin.weight is not w
    # a tuple of dicts, a partial dict (the bias stays the module's), a lone argument
    out = ff.functional_call(lin, ({"weight": w}, {"bias": b}), x)
    close(out.numpy(), x.numpy() @ w.numpy().T + b.numpy())
    out = ff.functional_call(lin, {"weight": w}, x)
    close(out.detach().numpy(), x.numpy() @ w.numpy().T + bias0.numpy())
    # gradients with respect to the given parameters, by grad
    g = ff.grad(lambda p: ff.functional_call(lin, p, (x,)).sum())({"weight": w, "bias": b})
    close(g["weight"].numpy(), np.tile(x.numpy().sum(0), (2, 1)))
    close(g["bias"].numpy(), np.full(2, 5.0))
    assert lin.weight.grad is None


def test_functional_call_errors_ties_and_buffers():
    from flambeau import nn

    lin = _linear(1)
    w = t64((2, 3), 36)
    x = t64((1, 3), 37)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        ff.functional_call(lin, ({"weight": w}, {"weight": w}), x)
    with pytest.raises(ValueError, match="to be a dict, or a list/tuple of dicts"):
        ff.functional_call(lin, "weight", x)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): 'bias'"):
        ff.functional_call(lin, {"weight": w}, x, strict=True)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'other'"):
        ff.functional_call(lin, {"weight": w, "bias": w[0], "other": w}, x, strict=True)

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3, bias=False).double()
            self.b = nn.Linear(3, 3, bias=False).double()
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    tied = Tied()
    eye = F.eye(3, dtype=F.float64)
    two = 2 * eye
    close(ff.functional_call(tied, {"a.weight": two}, x).numpy(), 4 * x.numpy())
    own = tied.a.weight.detach().numpy()
    untied = ff.functional_call(tied, {"a.weight": two}, x, tie_weights=False).detach().numpy()
    close(untied, 2 * x.numpy() @ own.T)
    with pytest.raises(ValueError, match="which are tied"):
        ff.functional_call(tied, {"a.weight": two, "b.weight": eye}, x)

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", F.zeros(()))

        def forward(self, x):
            self.n = self.n + 1
            return x * self.n

    counter = Counter()
    state = {"n": F.tensor(5.0)}
    close(ff.functional_call(counter, state, F.ones(1)).numpy(), [6.0])
    assert state["n"].item() == 6.0 and counter.n.item() == 0.0


def test_stack_module_state_ensemble_equals_loop():
    models = [_linear(s) for s in range(3)]
    params, buffers = ff.stack_module_state(models)
    assert tuple(params["weight"].shape) == (3, 2, 3)
    assert params["weight"].requires_grad and params["weight"].is_leaf
    x = t64((4, 3), 38)

    def call(p, b, x):
        return ff.functional_call(models[0], (p, b), (x,))

    out = ff.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        close(out[i].detach().numpy(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        ff.stack_module_state([])
    from flambeau import nn

    with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
        ff.stack_module_state([models[0], nn.Sequential(nn.Linear(3, 2))])


def test_replace_all_batch_norm_modules_and_misc():
    from flambeau import nn

    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Sequential(nn.BatchNorm1d(2)))
    assert ff.replace_all_batch_norm_modules_(net) is net
    for bn in (net[1], net[2][0]):
        assert bn.running_mean is None and bn.running_var is None
        assert bn.num_batches_tracked is None and not bn.track_running_stats
    net(F.randn(4, 2))  # batch statistics only; nothing to update
    # functionalize: the same values and input mutations; debug_unwrap: identity
    x = F.zeros(2)
    assert ff.functionalize(lambda a: a.add_(1) * 2)(x).tolist() == [2.0, 2.0]
    assert x.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="received invalid argument for remove=bad"):
        ff.functionalize(F.sin, remove="bad")
    assert ff.debug_unwrap(x) is x


def test_rearrange_matches_numpy():
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    x = F.from_numpy(a)
    close(ff.rearrange(x, "a b c d -> d (a b) c").numpy(),
          a.transpose(3, 0, 1, 2).reshape(5, 6, 4))  # fmt: skip
    close(ff.rearrange(x, "a (b1 b2) c d -> b2 a c d b1", b1=3).numpy(),
          a.reshape(2, 3, 1, 4, 5).transpose(2, 0, 3, 4, 1))  # fmt: skip
    close(ff.rearrange(x, "a ... -> ... 1 a").numpy(), np.moveaxis(a, 0, -1)[..., None, :])
    close(ff.rearrange(x, "a ... -> a (...)").numpy(), a.reshape(2, 60))
    close(ff.rearrange([x[0], x[1]], "n b c d -> b (n c) d").numpy(),
          a.transpose(1, 0, 2, 3).reshape(3, 8, 5))  # fmt: skip
    with pytest.raises(ValueError, match="Number of dimensions in pattern"):
        ff.rearrange(x, "a b -> b a")
    with pytest.raises(ValueError, match="Identifiers only on one side"):
        ff.rearrange(x, "a b c d -> a b c")
    with pytest.raises(ValueError, match="duplicate dimension 'a'"):
        ff.rearrange(x, "a a c d -> a c d")
    with pytest.raises(ValueError, match="cannot infer the sizes of two dimensions"):
        ff.rearrange(x, "a (b1 b2) c d -> a b1 b2 c d")


def test_nested_transform_over_a_captured_input_returns_plain_tensors():
    # d/dp sum(d/dx sum(p * x**3)) = 3 x**2; the inner grad keeps a graph to p (captured
    # from the outer transform), which must not make the outer result depend on the
    # inner transform's own leaf, nor keep it on a graph.
    xs = F.tensor([1.0, 2.0, 3.0])
    w = F.tensor([1.0, -1.0, 0.5])
    g = ff.grad(lambda p: ff.grad(lambda x: (p * x**3).sum())(xs).sum())(w)
    assert not g.requires_grad and g.grad_fn is None
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0, 27.0])
    h = ff.grad(lambda p: ff.hessian(lambda x: (p * x**3).sum())(xs).sum())(w)
    assert not h.requires_grad
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0, 18.0])
    j = ff.jacrev(lambda p: ff.jvp(lambda x: p * x**3, (xs,), (F.ones(3),))[1])(w)
    assert not j.requires_grad
    np.testing.assert_allclose(j.numpy(), np.diag([3.0, 12.0, 27.0]))
    # Repeated steps do not chain graphs (each step used to grow the graph and slow down).
    p = w
    for _ in range(3):
        p = p - 0.1 * ff.grad(lambda q: ff.grad(lambda x: (q * x**3).sum())(xs).sum())(p)
    assert not p.requires_grad
    np.testing.assert_allclose(p.numpy(), [0.1, -4.6, -7.6], rtol=1e-6)
    # A tensor from outside that requires grad still gets the graph.
    wr = w.clone().requires_grad_(True)
    g = ff.grad(lambda x: (wr * x**3).sum())(xs)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(wr.grad.numpy(), [3.0, 12.0, 27.0])
