"""The neural-network functions PyTorch has at top level (flambeau._nn_ops, and pdist in
flambeau._statistics): values against NumPy, gradients against finite differences and
hand-derived subgradients, PyTorch's errors for bad arguments."""

import numpy as np
import pytest

import flambeau as torch

rng = np.random.default_rng(13)


def t(a, requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def grads(fn, *arrays):
    """The gradients of fn(*tensors).sum() with respect to each array, as NumPy arrays."""
    pytest.importorskip("flambeau.autograd")
    leaves = [t(a, requires_grad=True) for a in arrays]
    fn(*[x * 1.0 for x in leaves]).sum().backward()
    return [x.grad.numpy() for x in leaves]


# ---- bilinear -------------------------------------------------------------------------------


def test_bilinear_matches_einsum_and_gradcheck():
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    w, bias = rng.standard_normal((6, 4, 5)), rng.standard_normal(6)
    want = np.einsum("nki,oij,nkj->nko", a, w, b) + bias
    np.testing.assert_allclose(torch.bilinear(t(a), t(b), t(w), t(bias)).numpy(), want)
    np.testing.assert_allclose(
        torch.bilinear(t(a[0, 0]), t(b[0, 0]), t(w)).numpy(), want[0, 0] - bias
    )
    autograd = pytest.importorskip("flambeau.autograd")
    args = [t(x, requires_grad=True) for x in (a[:, :2], b[:, :2], w[:2], bias[:2])]
    assert autograd.gradcheck(torch.bilinear, args)


@pytest.mark.parametrize(
    ("shapes", "error", "message"),
    [
        (
            ((2, 4), (2, 1, 5), (6, 4, 5), None),
            RuntimeError,
            "dimensions do not match: got 2 and 3",
        ),
        (((2, 7, 4), (2, 6, 5), (6, 4, 5), None), RuntimeError, "at dim 1: got 7 and 6"),
        (((2, 3), (2, 5), (6, 4, 5), None), RuntimeError, "input1 size .* got 3 but expected 4"),
        (((2, 4), (2, 6), (6, 4, 5), None), RuntimeError, "input2 size .* got 6 but expected 5"),
        (((2, 4), (2, 5), (6, 4, 5), (3,)), RuntimeError, "bias size .* got 3 but expected 6"),
        (((2, 4), (2, 5), (6, 4, 5), ()), IndexError, "no dimensions"),
        (((2, 4), (2, 5), (6, 4), None), IndexError, "weight must be 3-D"),
        (((), (), (6, 4, 5), None), IndexError, "no dimensions"),
    ],
)
def test_bilinear_errors(shapes, error, message):
    args = [None if s is None else torch.zeros(s) for s in shapes]
    with pytest.raises(error, match=message):
        torch.bilinear(*args)


def test_bilinear_requires_one_dtype_and_tensors():
    z = torch.zeros
    with pytest.raises(RuntimeError, match="same dtype, got input1: float64, input2: float32"):
        torch.bilinear(z(2, 4, dtype=torch.float64), z(2, 5), z(6, 4, 5))
    with pytest.raises(RuntimeError, match="bias: float64"):
        torch.bilinear(z(2, 4), z(2, 5), z(6, 4, 5), z(6, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"argument 'bias' \(position 4\) must be Tensor, not int"):
        torch.bilinear(z(2, 4), z(2, 5), z(6, 4, 5), 3)


# ---- cosine_similarity and pairwise_distance ------------------------------------------------


def test_cosine_similarity_broadcasts_promotes_and_checks():
    a, b = rng.standard_normal((3, 1, 5)), rng.standard_normal((4, 5))
    want = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    np.testing.assert_allclose(torch.cosine_similarity(t(a), t(b), dim=-1).numpy(), want)
    ints = torch.ones(2, 3, dtype=torch.int64)
    assert torch.cosine_similarity(ints, torch.ones(2, 3)).dtype == torch.float32
    with pytest.raises(RuntimeError, match="common dtype is int64"):
        torch.cosine_similarity(ints, ints)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match .* b \(4\)"):
        torch.cosine_similarity(torch.zeros(2, 3), torch.zeros(4, 3))


def test_cosine_similarity_gradient_ignores_the_eps_clamp():
    # Below eps the norm is clamped in value only (PyTorch clamps it under no_grad): with
    # f = x . y / (N |y|), N = eps in value but d N / d x = x / |x|,
    # df/dx = y / (eps |y|) - (x . y) / (eps^2 |y|) * x / |x|.
    eps = 1e-8
    x, y = np.array([[1e-12, 0.0, 0.0]]), np.array([[1.0, 1.0, 0.0]])
    (gx,) = grads(lambda a: torch.cosine_similarity(a, t(y), eps=eps), x)
    ny = np.linalg.norm(y)
    want = y / (eps * ny) - (x @ y.T) / (eps**2 * ny) * x / np.linalg.norm(x)
    np.testing.assert_allclose(gx, want, rtol=1e-6)


def test_pairwise_distance_matches_numpy():
    a, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    for p in (1.0, 2.0, 3.0, float("inf")):
        want = np.linalg.norm(a - b + 1e-6, p, axis=-1)
        np.testing.assert_allclose(torch.pairwise_distance(t(a), t(b), p).numpy(), want)
    assert torch.pairwise_distance(t(1.0), t(0.0)).shape == ()
    with pytest.raises(TypeError, match="'x1' \\(position 1\\) must be Tensor, not list"):
        torch.pairwise_distance([1.0], t([0.0]))


# ---- pdist ----------------------------------------------------------------------------------


def test_pdist_inf_gives_every_tie_the_full_subgradient():
    # Rows 0 and 2 differ by (1, -1, -1): all three entries tie for the largest, and each gets
    # the sign of its difference (not a third of it, as amax's gradient would share it).
    x = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [0.0, 3.0, 1.0]])
    (gx,) = grads(lambda a: torch.pdist(a, float("inf")), x)
    sign = np.array([1.0, -1.0, -1.0])
    np.testing.assert_array_equal(gx, [sign, sign, -2 * sign])
    np.testing.assert_array_equal(torch.pdist(torch.zeros(3, 0), float("inf")).numpy(), [0, 0, 0])


def test_pdist_gradient_is_zero_between_coincident_rows():
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]])
    for p in (0.5, 1.0, 2.0, 3.0):
        (gx,) = grads(lambda a, p=p: torch.pdist(a, p)[:1], x)
        np.testing.assert_array_equal(gx, np.zeros_like(x))


def test_pdist_argument_errors():
    with pytest.raises(RuntimeError, match="^pdist only supports floating-point dtypes$"):
        torch.pdist(torch.zeros(3, 2, dtype=torch.int64))
    with pytest.raises(TypeError, match=r"'p' \(position 2\) must be float, not str"):
        torch.pdist(torch.zeros(3, 2), "2")
    with pytest.raises(TypeError, match=r"'input' \(position 1\) must be Tensor, not list"):
        torch.pdist([[1.0]])


# ---- pixel and channel shuffles -------------------------------------------------------------


def test_pixel_shuffle_errors_follow_pytorch():
    x = torch.zeros(1, 8, 2, 3)
    with pytest.raises(RuntimeError, match="at least 3 dimensions, but got input with 2"):
        torch.pixel_shuffle(torch.zeros(8, 2), 2)
    with pytest.raises(RuntimeError, match="expects a positive upscale_factor, but got 0"):
        torch.pixel_shuffle(x, 0)
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=6 is not divisible by 4"):
        torch.pixel_shuffle(torch.zeros(1, 6, 2, 3), 2)
    with pytest.raises(TypeError, match="'upscale_factor' \\(position 2\\) must be int, not float"):
        torch.pixel_shuffle(x, 2.0)
    with pytest.raises(TypeError, match="must be int, not bool"):
        torch.pixel_shuffle(x, True)
    with pytest.raises(RuntimeError, match=r"expects height .* input.size\(-2\)=5"):
        torch.pixel_unshuffle(torch.zeros(1, 2, 5, 5), 2)
    with pytest.raises(RuntimeError, match=r"expects width .* input.size\(-1\)=5"):
        torch.pixel_unshuffle(torch.zeros(1, 2, 4, 5), 2)
    assert torch.pixel_shuffle(x, torch.tensor(2)).shape == (1, 2, 4, 6)


def test_channel_shuffle_names_its_function_in_argument_errors():
    x = torch.arange(12.0).reshape(1, 6, 2)
    order = [0, 2, 4, 1, 3, 5]
    for fn in (torch.channel_shuffle, torch.native_channel_shuffle):
        np.testing.assert_array_equal(fn(x, 3).numpy(), x.numpy()[:, order])
        with pytest.raises(TypeError, match=f"^{fn.__name__}\\(\\): argument 'groups'"):
            fn(x, 3.0)
    with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
        torch.channel_shuffle(torch.zeros(1, 6), 3)


# ---- prelu and the in-place activations -----------------------------------------------------


def test_prelu_shapes_gradients_and_errors():
    x = np.array([[-1.0, 0.0, 2.0]])
    w = np.array([0.25, 0.5, 0.75])
    gx, gw = grads(lambda a, b: torch.prelu(a.reshape(1, 3, 1), b), x, w)
    # d/dx is 1 above 0, the weight at and below; d/dw is x where x <= 0.
    np.testing.assert_array_equal(gx, [[0.25, 0.5, 1.0]])
    np.testing.assert_array_equal(gw, [-1.0, 0.0, 0.0])
    assert torch.prelu(t(-3.0), t([0.1])).shape == ()
    with pytest.raises(RuntimeError, match="Not allow zero-dim input tensor"):
        torch.prelu(t(-3.0), t([0.1, 0.2]))
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got float32 and"):
        torch.prelu(torch.zeros(2, 3), t([0.1]))
    with pytest.raises(RuntimeError, match="parameter numbers = 4 and channel size = 3"):
        torch.prelu(torch.zeros(2, 3), torch.zeros(2, 2))
    with pytest.raises(NotImplementedError, match="prelu: not implemented for dtype int64"):
        torch.prelu(torch.ones(2, 3, dtype=torch.int64), torch.ones(1, dtype=torch.int64))


@pytest.mark.parametrize(
    ("fn", "want_grad"),
    [
        (lambda x: torch.threshold_(x, 0.1, 5.0), [0.0, 0.0, 0.0, 1.0, 1.0]),
        (lambda x: torch.rrelu_(x, 0.1, 0.3), [0.2, 0.2, 0.2, 1.0, 1.0]),
        (lambda x: torch.rrelu(x, 0.1, 0.3), [0.2, 0.2, 0.2, 1.0, 1.0]),
    ],
)
def test_inplace_and_eval_activations_differentiate(fn, want_grad):
    # The slope at 0 is the negative one, as in PyTorch's kernels.
    (gx,) = grads(fn, [-1.5, -0.2, 0.0, 0.3, 2.0])
    np.testing.assert_allclose(gx, want_grad)


def test_rrelu_training_gradient_is_the_drawn_slope():
    pytest.importorskip("flambeau.autograd")
    x = t([-1.0, -2.0, 0.0, 3.0], requires_grad=True)
    gen = torch.Generator().manual_seed(5)
    out = torch.rrelu(x, 0.1, 0.3, True, gen)
    out.sum().backward()
    slopes = x.grad.numpy()
    assert (slopes[:3] >= 0.1).all() and (slopes[:3] <= 0.3).all() and slopes[3] == 1.0
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * slopes)
    again = torch.rrelu(x.detach(), 0.1, 0.3, True, torch.Generator().manual_seed(5))
    np.testing.assert_array_equal(again.numpy(), out.detach().numpy())


def test_activation_argument_errors():
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        torch.rrelu(torch.zeros(3), 0.3, 0.1)
    with pytest.raises(NotImplementedError, match="rrelu_: not implemented for dtype int64"):
        torch.rrelu_(torch.ones(3, dtype=torch.int64))
    for fn in (torch.relu_, torch.selu_, torch.celu_, torch.rrelu):
        with pytest.raises(TypeError, match=f"^{fn.__name__}\\(\\): argument 'input'"):
            fn([1.0])
