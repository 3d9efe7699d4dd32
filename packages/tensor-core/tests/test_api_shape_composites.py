"""Shape, indexing, copy and scatter functions composed from core operators
(flambeau._shape_composites, _view_copies), against NumPy."""

import itertools

import numpy as np
import pytest

import flambeau as torch

rng = np.random.default_rng(0)


def t(a):
    return torch.tensor(np.asarray(a))


def test_broadcasting():
    assert torch.broadcast_shapes(2, (3, 1), torch.Size([1])) == (3, 2)
    assert torch.broadcast_shapes() == ()
    with pytest.raises(RuntimeError, match="broadcast"):
        torch.broadcast_shapes((2,), (3,))
    a, b = torch.broadcast_tensors(torch.zeros(3, 1), torch.zeros(4))
    assert a.shape == b.shape == (3, 4)
    x = torch.arange(3)
    y = torch.broadcast_to(x, (2, 3))
    assert y.shape == (2, 3) and y.data_ptr() == x.data_ptr()
    assert x.broadcast_to((2, 3)).shape == (2, 3)


def test_broadcast_tensors_error_names_the_clashing_sizes():
    # PyTorch's message: the running shape is "a", the next tensor "b", dims from the left.
    shapes = [((2,), (2,), (3,), 2, 3, 0), ((5, 2, 3), (4, 3), None, 2, 4, 1)]
    for first, second, third, a, b, dim in shapes:
        args = [torch.zeros(s) for s in (first, second, third) if s is not None]
        with pytest.raises(RuntimeError, match=rf"tensor a \({a}\) .* tensor b \({b}\) at "
                           rf"non-singleton dimension {dim}$"):  # fmt: skip
            torch.broadcast_tensors(*args)


def test_tile():
    a = rng.standard_normal((2, 3))
    for reps in [(2,), (2, 2), (1, 2, 3), 3]:
        np.testing.assert_array_equal(torch.tile(t(a), reps).numpy(), np.tile(a, reps))
    assert t(a).tile((2, 1)).shape == (4, 3)
    # the method also takes the repetitions as separate ints, or by keyword
    np.testing.assert_array_equal(t(a).tile(2, 2).numpy(), np.tile(a, (2, 2)))
    np.testing.assert_array_equal(t(a).tile(3).numpy(), np.tile(a, 3))
    assert t(a).tile(dims=[1, 2]).shape == (2, 6)


def test_atleast():
    assert torch.atleast_1d(torch.tensor(1.0)).shape == (1,)
    assert torch.atleast_2d(torch.tensor(1.0)).shape == (1, 1)
    assert torch.atleast_2d(torch.zeros(3)).shape == (1, 3)
    assert torch.atleast_3d(torch.zeros(3)).shape == (1, 3, 1)
    assert torch.atleast_3d(torch.zeros(2, 3)).shape == (2, 3, 1)
    assert torch.atleast_3d(torch.zeros(2, 3, 4, 5)).shape == (2, 3, 4, 5)
    pair = torch.atleast_1d(torch.tensor(1), torch.tensor(2))
    assert isinstance(pair, tuple) and [p.shape for p in pair] == [(1,), (1,)]
    assert isinstance(torch.atleast_2d([torch.tensor(1)]), tuple)


def test_stacks():
    a, b = np.array(1), np.array([2])
    np.testing.assert_array_equal(torch.column_stack([t(a), t(b)]).numpy(), np.column_stack([a, b]))
    m = rng.standard_normal((3, 2))
    v = rng.standard_normal(3)
    np.testing.assert_array_equal(torch.column_stack([t(m), t(v)]).numpy(), np.column_stack([m, v]))
    np.testing.assert_array_equal(torch.row_stack([t(v), t(v)]).numpy(), np.vstack([v, v]))


def test_block_diag():
    import scipy.linalg

    blocks = [np.array([[1.0]]), np.array([[2.0, 3.0]]), np.ones((2, 1))]
    got = torch.block_diag(torch.tensor(1.0), torch.tensor([2.0, 3.0]), torch.ones(2, 1))
    np.testing.assert_array_equal(got.numpy(), scipy.linalg.block_diag(*blocks))
    assert torch.block_diag(torch.ones(1, dtype=torch.int64), torch.ones(1)).dtype == torch.float32
    assert torch.block_diag().shape == (1, 0)
    with pytest.raises(RuntimeError, match="2 or fewer dimensions"):
        torch.block_diag(torch.zeros(2, 2, 2))


@pytest.mark.parametrize(
    "name, np_fn, ndim, dim",
    [
        ("hsplit", np.hsplit, 2, 1),
        ("vsplit", np.vsplit, 2, 0),
        ("dsplit", np.dsplit, 3, 2),
    ],
)
def test_splits(name, np_fn, ndim, dim):
    a = rng.standard_normal((4, 6, 8)[:ndim])
    fn = getattr(torch, name)
    for spec in (2, [1, 3]):
        got = fn(t(a), spec)
        want = np_fn(a, spec)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(RuntimeError, match="not divisible"):
        fn(t(a), 5)
    with pytest.raises(RuntimeError, match="at least"):
        fn(torch.zeros(()), 1)


def test_hsplit_1d_and_unsafe():
    parts = torch.hsplit(torch.arange(6), 3)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]
    assert [p.tolist() for p in torch.unsafe_chunk(torch.arange(5), 2)] == [[0, 1, 2], [3, 4]]
    assert [p.tolist() for p in torch.arange(5).unsafe_split(2)] == [[0, 1], [2, 3], [4]]


def test_rot90():
    a = rng.standard_normal((2, 3, 4))
    for k in range(-5, 6):
        for dims in ([0, 1], [1, 2], [2, 0]):
            np.testing.assert_array_equal(
                torch.rot90(t(a), k, dims).numpy(), np.rot90(a, k, axes=dims)
            )
    with pytest.raises(RuntimeError, match="total dims >= 2"):
        torch.rot90(torch.zeros(2))
    with pytest.raises(RuntimeError, match="different"):
        torch.rot90(torch.zeros(2, 2), 1, [0, 0])
    with pytest.raises(RuntimeError, match="rotation dims == 2"):
        torch.rot90(torch.zeros(2, 2, 2), 1, [0, 1, 2])


def test_inner_and_chain_matmul():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(torch.inner(t(a), t(b)).numpy(), np.inner(a, b))
    np.testing.assert_allclose(torch.inner(t(a), torch.tensor(2.0)).numpy(), a * 2)
    with pytest.raises(RuntimeError, match="last dimension must match"):
        torch.inner(torch.zeros(2, 3), torch.zeros(4))
    ms = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 2))]
    with pytest.warns(UserWarning, match="deprecated"):
        got = torch.chain_matmul(*map(t, ms))
    np.testing.assert_allclose(got.numpy(), ms[0] @ ms[1] @ ms[2])


def test_diagflat_and_vander():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(torch.diagflat(t(a), k).numpy(), np.diagflat(a, k))
    x = np.array([2, 3, 5])
    for n in (None, 0, 4):
        for inc in (False, True):
            got = torch.vander(t(x), n, inc)
            np.testing.assert_array_equal(got.numpy(), np.vander(x, n, inc))
            assert got.dtype == torch.int64
    assert torch.vander(torch.tensor([1.5])).dtype == torch.float32
    with pytest.raises(RuntimeError, match="one-dimensional"):
        torch.vander(torch.zeros(2, 2))


def test_triangle_indices():
    for r, c, k in ((3, 3, 0), (4, 2, -1), (2, 5, 2), (0, 3, 0)):
        np.testing.assert_array_equal(
            torch.tril_indices(r, c, k).numpy(), np.stack(np.tril_indices(r, k, c))
        )
        np.testing.assert_array_equal(
            torch.triu_indices(r, c, k).numpy(), np.stack(np.triu_indices(r, k, c))
        )
    assert torch.tril_indices(3, 3, dtype=torch.int32).dtype == torch.int32
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.tril_indices(-1, 2)


def test_cartesian_prod_and_combinations():
    a, b = [1, 2], [3, 4, 5]
    got = torch.cartesian_prod(torch.tensor(a), torch.tensor(b)).tolist()
    assert got == [list(p) for p in itertools.product(a, b)]
    assert torch.cartesian_prod(torch.tensor(a)).tolist() == a
    x = [10, 20, 30, 40]
    for r in (1, 2, 3):
        for rep in (False, True):
            pick = itertools.combinations_with_replacement if rep else itertools.combinations
            got = torch.combinations(torch.tensor(x), r, rep).tolist()
            assert got == [list(c) for c in pick(x, r)]
    assert torch.combinations(torch.arange(3), r=0).shape == (0,)
    assert torch.combinations(torch.arange(3), r=4).shape == (0, 4)
    with pytest.raises(RuntimeError, match="1D vector"):
        torch.combinations(torch.zeros(2, 2))


def test_repeat_interleave():
    a = np.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(torch.repeat_interleave(t(a), 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(
        t(a).repeat_interleave(torch.tensor([1, 2]), dim=0).numpy(), np.repeat(a, [1, 2], 0)
    )
    np.testing.assert_array_equal(
        t(a).repeat_interleave(torch.tensor(3), dim=1).numpy(), np.repeat(a, 3, 1)
    )
    np.testing.assert_array_equal(
        torch.repeat_interleave(torch.tensor([2, 0, 1])).numpy(), np.repeat([0, 1, 2], [2, 0, 1])
    )
    out = torch.repeat_interleave(t(a), torch.tensor([0, 2]), dim=1, output_size=2)
    np.testing.assert_array_equal(out.numpy(), np.repeat(a, [0, 2], 1))
    with pytest.raises(RuntimeError, match="same size as input"):
        torch.tensor([1, 2]).repeat_interleave(torch.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.tensor([1, 2]).repeat_interleave(-1)
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(torch.tensor([1, -2]))
    with pytest.raises(RuntimeError, match="output_size"):
        torch.repeat_interleave(torch.tensor([1, 2]), output_size=5)


def test_where_one_argument():
    c = torch.tensor([[1, 0], [0, 1]])
    rows, cols = torch.where(c)
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    x = torch.where(c > 0, torch.ones(2, 2), 0.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(2))


def test_range_is_inclusive_and_deprecated():
    with pytest.warns(UserWarning, match="deprecated"):
        r = torch.range(1, 4)
    np.testing.assert_array_equal(r.numpy(), [1, 2, 3, 4])
    assert r.dtype == torch.float32
    with pytest.warns(UserWarning):
        np.testing.assert_allclose(torch.range(0, 1, 0.3).numpy(), [0, 0.3, 0.6, 0.9], 1e-6)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="step"):
        torch.range(0, 1, 0)


def test_copy_functions_are_contiguous_copies():
    x = torch.arange(12.0).reshape(3, 4)
    a = x.numpy()
    cases = [
        (torch.t_copy(x), a.T),
        (torch.transpose_copy(x, 0, 1), a.T),
        (torch.permute_copy(x, (1, 0)), a.T),
        (torch.expand_copy(torch.ones(3, 1), (3, 4)), np.ones((3, 4))),
        (torch.diagonal_copy(x, 1), np.diagonal(a, 1)),
        (torch.select_copy(x, 1, 2), a[:, 2]),
        (torch.slice_copy(x, 1, 1, 3), a[:, 1:3]),
        (torch.narrow_copy(x, 0, 1, 2), a[1:3]),
        (x.narrow_copy(1, 0, 2), a[:, :2]),
        (torch.view_copy(x, 4, 3), a.reshape(4, 3)),
        (torch.unsqueeze_copy(x, 0), a[None]),
        (torch.squeeze_copy(torch.ones(1, 3)), np.ones(3)),
        (torch.alias_copy(x), a),
        (torch.detach_copy(x), a),
        (torch.as_strided_copy(x, (2, 2), (1, 4)), a.ravel()[[[0, 4], [1, 5]]]),
        (
            torch.unfold_copy(torch.arange(5.0), 0, 2, 1),
            np.lib.stride_tricks.sliding_window_view(np.arange(5.0), 2),
        ),  # noqa: E501
    ]
    for got, want in cases:
        assert got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), want)
    assert torch.t_copy(x).data_ptr() != x.data_ptr()
    parts = torch.split_copy(x, 2)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2, 4), (1, 4)]
    assert [p.shape for p in torch.split_with_sizes_copy(x, [1, 2])] == [(1, 4), (2, 4)]
    assert len(torch.unbind_copy(x, 1)) == 4
    c = torch.view_as_complex_copy(torch.ones(2, 2))
    assert c.dtype == torch.complex64
    assert torch.view_as_real_copy(c).shape == (2, 2)


def test_scatters():
    a = np.arange(12.0).reshape(3, 4)
    x = t(a)
    want = a.copy()
    want[:, 0:4:2] = 0
    np.testing.assert_array_equal(
        torch.slice_scatter(x, torch.zeros(3, 2), 1, 0, 4, 2).numpy(), want
    )
    want = a.copy()
    want[1] = -1
    np.testing.assert_array_equal(x.select_scatter(torch.full((4,), -1.0), 0, 1).numpy(), want)
    want = a.copy()
    want[[0, 1, 2], [1, 2, 3]] = 7
    np.testing.assert_array_equal(torch.diagonal_scatter(x, torch.full((3,), 7.0), 1).numpy(), want)
    want = a.copy().ravel()
    want[[1, 6]] = 0
    np.testing.assert_array_equal(
        torch.as_strided_scatter(x, torch.zeros(2), (2,), (5,), 1).numpy(), want.reshape(3, 4)
    )
    np.testing.assert_array_equal(x.numpy(), a)  # out of place
    with pytest.raises(RuntimeError, match="src"):
        torch.select_scatter(x, torch.zeros(3), 0, 0)


def test_composites_are_differentiable():
    autograd = pytest.importorskip("flambeau.autograd")
    x = torch.tensor(rng.standard_normal((3, 4))).requires_grad_()
    checks = [
        lambda v: torch.rot90(v, 1).sin(),
        lambda v: torch.tile(v, (2, 1)),
        lambda v: v.repeat_interleave(torch.tensor([1, 0, 2]), dim=0),
        lambda v: torch.block_diag(v, v[:1]),
        lambda v: torch.slice_scatter(v, v[:, :2] * 2, 1, 0, 2),
        lambda v: torch.diagonal_scatter(v, v.diagonal().exp()),
        lambda v: torch.inner(v, v),
    ]
    for fn in checks:
        assert autograd.gradcheck(fn, (x,))


def test_flambeau_functional_holds_the_top_level_functions_themselves():
    # torch.functional: the same function objects as torch.<name>; libraries put them
    # in sets and test membership (opt_einsum_fx's einsum fusion).
    import flambeau.functional as functional

    assert functional.einsum is torch.einsum and functional.split is torch.split
    assert all(getattr(functional, n) is getattr(torch, n) for n in functional.__all__)
    assert torch.functional is functional
    with pytest.raises(AttributeError, match="no attribute 'conv2d'"):
        getattr(functional, "conv2d")  # noqa: B009
