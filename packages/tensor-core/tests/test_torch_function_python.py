"""flambeau's functions written in Python take part in ``__torch_function__`` as PyTorch's
do (torch.functional's einsum, split, stft, unique, ..., and the Tensor methods written in
Python): a TorchFunctionMode and a Tensor subclass are handed the function itself, once.
Also the cost-free checks of has_torch_function for plain tensors, with its semantics kept.

The table lists, for one call of each function, the name PyTorch hands over; the oracle
test checks it against PyTorch itself where it is installed."""

from __future__ import annotations

import inspect
import threading

import pytest

import flambeau
from flambeau import overrides
from flambeau.overrides import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    redispatch_function,
)
from flambeau_testing.dispatch_log import handed_over as _run
from flambeau_testing.dispatch_log import log_mode as _log_mode
from flambeau_testing.dispatch_log import names as _names


def _r(L, *shape):
    return L.rand(*shape, generator=L.Generator().manual_seed(0))


def _m(L):
    return _r(L, 3, 3)


def _v(L):
    return _r(L, 3)


def _spd(L):
    a = _r(L, 3, 3)
    return a @ a.mT + 3 * L.eye(3)


def _window(L):
    return L.hann_window(16)


def _cases():
    """(id, the name handed over, build(L) -> (function, args, kwargs), subclass sees it)."""
    out = []

    def case(cid, expected, build, sub=True):
        out.append(pytest.param(expected, build, sub, id=cid))

    def on(name, *args, **kwargs):
        def build(L):
            owner, _, attr = name.rpartition(".")
            fn = getattr(L.Tensor if owner else L, attr)
            return (
                fn,
                tuple(a(L) if callable(a) else a for a in args),
                {k: v(L) if callable(v) else v for k, v in kwargs.items()},
            )

        return build

    for name in (
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "block_diag",
        "broadcast_tensors",
        "cartesian_prod",
    ):
        case(name, name, on(name, _v, _v))
    case("atleast_1d-list", "atleast_1d", on("atleast_1d", lambda L: [_v(L), _v(L)]), sub=False)
    case("cdist", "cdist", on("cdist", _m, _m))
    case("chain_matmul", "chain_matmul", on("chain_matmul", _m, _m, _m))
    case("einsum", "einsum", on("einsum", "ij,jk->ik", _m, _m))
    case("einsum-list", "einsum", on("einsum", "ij,jk->ik", lambda L: [_m(L), _m(L)]), sub=False)
    case("einsum-sublist", "einsum", on("einsum", _m, [0, 1], _m, [1, 2], [0, 2]))
    case("stft", "stft", on("stft", lambda L: _r(L, 64), 16, return_complex=True, window=_window))
    case(
        "istft",
        "istft",
        on(
            "istft",
            lambda L: L.stft(_r(L, 64), 16, return_complex=True, window=_window(L)),
            16,
            window=_window,
        ),
    )
    case("tensordot", "tensordot", on("tensordot", _m, _m, dims=1))
    case(
        "unravel_index",
        "unravel_index",
        on("unravel_index", lambda L: L.tensor([4, 1]), (3, 2)),
        sub=False,
    )
    vals = lambda L: L.tensor([1.0, 2.0, 1.0])  # noqa: E731
    case("unique", "unique", on("unique", vals))
    case("unique-inverse", "unique", on("unique", vals, return_inverse=True))
    case("unique_consecutive", "unique_consecutive", on("unique_consecutive", vals))
    case("lu", "lu", on("lu", _m))
    case("meshgrid", "meshgrid", on("meshgrid", _v, _v, indexing="ij"))
    case("split", "split", on("split", _v, 1))
    case("norm", "norm", on("norm", _v))
    for name in (
        "det",
        "inverse",
        "logdet",
        "slogdet",
        "pinverse",
        "matrix_exp",
        "corrcoef",
        "cov",
        "diagflat",
        "qr",
        "svd",
        "geqrf",
        "cholesky",
    ):
        case(name, name, on(name, _spd))
    case("combinations", "combinations", on("combinations", _v))
    for name in ("column_stack", "row_stack"):
        case(name, name, on(name, lambda L: [_v(L), _v(L)]), sub=False)  # a list: not re-classed
    for name in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle"):
        case(name, name, on(name, lambda L: _r(L, 1, 4, 2, 2), 2))
    chol = lambda L: L.linalg.cholesky(_spd(L))  # noqa: E731
    case("cholesky_inverse", "cholesky_inverse", on("cholesky_inverse", chol))
    case("cholesky_solve", "cholesky_solve", on("cholesky_solve", _m, chol))
    for name in ("divide", "multiply", "subtract", "dist", "inner"):
        case(name, name, on(name, _m, _m))
    for name, arg in (
        ("hsplit", 3),
        ("vsplit", 3),
        ("tile", (2,)),
        ("rot90", 1),
        ("broadcast_to", (2, 3, 3)),
        ("repeat_interleave", 2),
    ):
        case(name, name, on(name, _m, arg))
    case("dsplit", "dsplit", on("dsplit", lambda L: _r(L, 2, 2, 2), 2))
    case("isin", "isin", on("isin", _v, _v))
    case("quantile", "quantile", on("quantile", _v, 0.5))
    case("nanquantile", "nanquantile", on("nanquantile", _v, 0.5))
    case("trapezoid", "trapezoid", on("trapezoid", _v))
    case("trapz", "trapz", on("trapz", _v, _v))
    case("cumulative_trapezoid", "cumulative_trapezoid", on("cumulative_trapezoid", _v))
    case("renorm", "renorm", on("renorm", _m, 2, 0, 1.0))
    case("gradient", "gradient", on("gradient", _v))
    case("histogram", "histogram", on("histogram", _v, bins=3))
    case("select_scatter", "select_scatter", on("select_scatter", _m, _v, 0, 0))
    case("slice_scatter", "slice_scatter", on("slice_scatter", _m, lambda L: _m(L)[:1], end=1))
    case("diagonal_scatter", "diagonal_scatter", on("diagonal_scatter", _m, _v))
    case(
        "index_reduce",
        "index_reduce",
        on("index_reduce", _v, 0, lambda L: L.tensor([0, 2]), lambda L: _r(L, 2), "prod"),
    )
    case(
        "bilinear",
        "bilinear",
        on("bilinear", lambda L: _r(L, 2, 4), lambda L: _r(L, 2, 5), lambda L: _r(L, 3, 4, 5)),
    )
    for name in ("cosine_similarity", "pairwise_distance"):
        case(name, name, on(name, _m, _m))
    case("pdist", "pdist", on("pdist", _m))
    case("prelu", "prelu", on("prelu", _m, lambda L: _r(L, 1)))
    case("rrelu", "rrelu", on("rrelu", _m))
    case("is_nonzero", "is_nonzero", on("is_nonzero", lambda L: L.tensor([1.0])))
    case("resolve_neg", "resolve_neg", on("resolve_neg", _m))
    case("lu_unpack", "lu_unpack", lambda L: (L.lu_unpack, tuple(L.linalg.lu_factor(_m(L))), {}))
    case("lu_solve", "lu_solve", lambda L: (L.lu_solve, (_m(L), *L.linalg.lu_factor(_spd(L))), {}))
    case(
        "triangular_solve", "triangular_solve", on("triangular_solve", _m, lambda L: _spd(L).triu())
    )
    for name, args in (
        ("view_copy", ((3, 3),)),
        ("permute_copy", ((1, 0),)),
        ("t_copy", ()),
        ("split_copy", (1,)),
        ("diagonal_copy", ()),
        ("unsqueeze_copy", (0,)),
    ):
        case(name, name, on(name, _m, *args))
    case("orgqr", "orgqr", lambda L: (L.orgqr, tuple(L.geqrf(_m(L))), {}))
    # flambeau.linalg and flambeau.fft: PyTorch names its functions linalg_* and fft_*
    for name, args in (
        ("cond", (_spd,)),
        ("diagonal", (_m,)),
        ("vander", (_v,)),
        ("vecdot", (_v, _v)),
        ("tensorinv", (lambda L: L.eye(4).reshape(2, 2, 2, 2),)),
        ("multi_dot", (lambda L: [_m(L), _m(L), _m(L)],)),
    ):
        case(
            f"linalg.{name}",
            f"linalg_{name}",
            lambda L, name=name, args=args: (
                getattr(L.linalg, name),
                tuple(a(L) for a in args),
                {},
            ),
            sub=name != "multi_dot",
        )
    case(
        "linalg.householder_product",
        "linalg_householder_product",
        lambda L: (L.linalg.householder_product, tuple(L.geqrf(_m(L))), {}),
    )
    for name in ("fftshift", "ifftshift"):
        case(
            f"fft.{name}", f"fft_{name}", lambda L, name=name: (getattr(L.fft, name), (_v(L),), {})
        )
    # Tensor methods written in Python
    case("Tensor.lu", "lu", on("Tensor.lu", _m))
    case(
        "Tensor.stft",
        "stft",
        on("Tensor.stft", lambda L: _r(L, 64), 16, return_complex=True, window=_window),
    )
    case("Tensor.unique", "unique", on("Tensor.unique", vals))
    case("Tensor.__format__", "__format__", on("Tensor.__format__", _m, ""))
    case("Tensor.__repr__", "__repr__", on("Tensor.__repr__", _m))
    case("Tensor.__contains__", "__contains__", on("Tensor.__contains__", _m, 0.5))
    case("Tensor.__reversed__", "__reversed__", on("Tensor.__reversed__", _v))
    case("Tensor.dim_order", "dim_order", on("Tensor.dim_order", _m))
    case("Tensor.resize_as", "resize_as", on("Tensor.resize_as", _m, _m))
    case("Tensor.module_load", "module_load", on("Tensor.module_load", _m, _m))
    case("Tensor.split", "split", on("Tensor.split", _v, 1))
    case("Tensor.norm", "norm", on("Tensor.norm", _v))
    return out


CASES = _cases()

# Where PyTorch's own function behaves differently in a mode: lobpcg, pca_lowrank and
# svd_lowrank take the call only from a tensor-like argument, never from a mode alone.
LOWRANK = [
    pytest.param("lobpcg", lambda L: (L.lobpcg, (_spd(L),), {"k": 1}), id="lobpcg"),
    pytest.param("pca_lowrank", lambda L: (L.pca_lowrank, (_m(L),), {"q": 2}), id="pca_lowrank"),
    pytest.param("svd_lowrank", lambda L: (L.svd_lowrank, (_m(L),), {"q": 2}), id="svd_lowrank"),
]


def _dispatches_itself(fn) -> bool:
    return "handle_torch_function" in getattr(getattr(fn, "__code__", None), "co_names", ())


@pytest.mark.parametrize(("expected", "build", "sub"), CASES)
def test_mode_and_subclass_see_the_function(expected, build, sub):
    fn, mode_funcs, sub_funcs = _run(flambeau, build)
    assert _names(mode_funcs) == [expected]
    assert _names(sub_funcs) == ([expected] if sub else [])
    if _dispatches_itself(fn):
        assert mode_funcs[0] is fn


@pytest.mark.parametrize(("expected", "build", "sub"), CASES)
def test_same_calls_as_pytorch(expected, build, sub):
    torch = pytest.importorskip("torch")
    _, mode_funcs, sub_funcs = _run(torch, build)
    assert _names(mode_funcs) == [expected]
    assert _names(sub_funcs) == ([expected] if sub else [])


@pytest.mark.parametrize(("expected", "build"), LOWRANK)
def test_low_rank_functions_dispatch_on_tensor_likes_only(expected, build):
    fn, _, sub_funcs = _run(flambeau, build, mode=False)
    assert sub_funcs == [fn]
    fn, args, kwargs = build(flambeau)
    with _log_mode(flambeau) as log:
        fn(*args, **kwargs)
    assert fn not in log.funcs  # the mode sees the operators inside instead


@pytest.mark.filterwarnings("ignore")  # the deprecated functions' own warnings
@pytest.mark.parametrize(("expected", "build", "sub"), CASES)
def test_plain_tensors_give_the_same_results(expected, build, sub):
    fn, args, kwargs = build(flambeau)
    if not _dispatches_itself(fn) or expected in ("rrelu", "__repr__", "__format__"):
        return
    inner = inspect.unwrap(fn)
    flambeau.manual_seed(0)
    ours = fn(*args, **kwargs)
    flambeau.manual_seed(0)
    theirs = inner(*build(flambeau)[1], **kwargs)
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, flambeau.Tensor):
            assert type(a) is flambeau.Tensor
            assert flambeau.equal(a, b)
        elif not isinstance(a, type(iter(()))):
            assert a == b


class _Tagged:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func)


@pytest.mark.parametrize(
    ("fn", "call"),
    [
        (flambeau.einsum, lambda t: flambeau.einsum("ij->ji", t)),
        (flambeau.atleast_2d, lambda t: flambeau.atleast_2d(flambeau.ones(2), t)),
        (flambeau.cdist, lambda t: flambeau.cdist(t, flambeau.ones(2, 2))),
        (flambeau.meshgrid, lambda t: flambeau.meshgrid(t, t, indexing="xy")),
        (flambeau.unique, lambda t: flambeau.unique(t, return_counts=True)),
        (flambeau.stft, lambda t: flambeau.stft(t, 16)),
        (flambeau.lobpcg, lambda t: flambeau.lobpcg(t)),
        (flambeau.Tensor.__repr__, lambda t: flambeau.Tensor.__repr__(t)),
    ],
)
def test_an_overrides_result_is_returned(fn, call):
    assert call(_Tagged()) == ("handled", fn)


def test_a_subclass_that_opts_out_does_not_dispatch():
    class Logged(flambeau.Tensor):
        __slots__ = ()
        funcs: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.funcs.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    class Quiet(Logged):
        __slots__ = ()
        __torch_function__ = _disabled_torch_function_impl

    q = flambeau.ones(3, 3).as_subclass(Quiet)
    out = flambeau.einsum("ij,jk->ik", q, q)
    flambeau.cdist(q, q)
    flambeau.unique(q)
    assert Logged.funcs == []
    assert type(out) is flambeau.Tensor and flambeau.equal(out, flambeau.full((3, 3), 3.0))


def test_signature_and_docstring_are_kept():
    for fn in (
        flambeau.cdist,
        flambeau.atleast_1d,
        flambeau.unique,
        flambeau.stft,
        flambeau.pixel_shuffle,
        flambeau.tensordot,
        flambeau.Tensor.lu,
    ):
        inner = inspect.unwrap(fn)
        assert fn is not inner and fn.__doc__ == inner.__doc__
        assert inspect.signature(fn) == inspect.signature(inner)
    assert flambeau.Tensor.lu.__name__ == "lu" and flambeau.Tensor.lu.__qualname__ == "Tensor.lu"
    assert overrides.is_tensor_method_or_property(flambeau.Tensor.__repr__)


# ---- has_torch_function: cheap for plain tensors, the same answers otherwise ----------------


class _Sub(flambeau.Tensor):
    __slots__ = ()


class _Opted(flambeau.Tensor):
    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl


class _Like:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_has_torch_function_answers():
    x = flambeau.ones(2)
    sub, opted, like = x.as_subclass(_Sub), x.as_subclass(_Opted), _Like()
    param = flambeau.nn.Parameter(flambeau.ones(2)) if hasattr(flambeau, "nn") else opted
    plain = (x, None, 1, 2.0, True, "s", [x], (x,), {"a": x}, slice(1), flambeau.float32, param)
    assert not has_torch_function(plain)
    assert not has_torch_function_variadic(*plain)
    assert not any(has_torch_function_unary(a) for a in plain)
    for overriding in (sub, like):
        assert has_torch_function((x, overriding))
        assert has_torch_function_variadic(x, None, overriding)
        assert has_torch_function_unary(overriding)
    assert not has_torch_function_unary(opted)
    assert not has_torch_function((object(), 3j, b"x", ...))
    with DisableTorchFunctionSubclass():
        assert not has_torch_function_unary(sub) and not has_torch_function((sub,))
    with DisableTorchFunction():
        assert not has_torch_function_variadic(sub, like)


def test_has_torch_function_sees_a_mode_on_this_thread_only():
    x = flambeau.ones(2)
    seen = {}

    def other_thread():
        seen["other"] = has_torch_function_unary(x)

    with overrides.BaseTorchFunctionMode():
        assert has_torch_function_unary(x) and has_torch_function((x,))
        assert has_torch_function_variadic(x, x) and has_torch_function(())
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        with DisableTorchFunctionSubclass():
            assert has_torch_function_unary(x)  # modes still run
        with DisableTorchFunction():
            assert not has_torch_function_unary(x)
    assert seen == {"other": False}
    assert not has_torch_function_unary(x)
    assert overrides._active[0] == 0


def test_a_type_given_torch_function_later_takes_part():
    class Late:
        pass

    late = Late()
    assert not has_torch_function_unary(late)
    Late.__torch_function__ = classmethod(lambda cls, func, types, args=(), kwargs=None: "late")
    assert has_torch_function_unary(late)
    assert flambeau.cdist(late, late) == "late"


def test_redispatch_skips_one_python_level_check():
    def double(a):
        if has_torch_function_unary(a):
            return handle_torch_function(double, (a,), a)
        return a * 2

    class Traced(flambeau.Tensor):
        __slots__ = ()
        names: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.names.append(func.__name__)
            return redispatch_function(func, types, args, kwargs)

    x = flambeau.tensor([3.0]).as_subclass(Traced)
    out = double(x)
    assert Traced.names == ["double", "mul"] and float(out) == 6.0
    y = flambeau.ones(1, 1).as_subclass(Traced)
    Traced.names.clear()
    flambeau.cdist(y, y)
    assert Traced.names[0] == "cdist" and len(Traced.names) > 1
    assert overrides._active[0] == 0 and not overrides._skip.pending
    with pytest.raises(RuntimeError, match="made no __torch_function__ check"):
        redispatch_function(lambda a: a, (), (1,), {})
    assert overrides._active[0] == 0 and not overrides._skip.pending


def test_out_is_handed_over_only_when_given():
    # As PyTorch's built-in functions: a handler that maps torch.inverse to a method of its
    # own (linear_operator's LinearOperator.inverse(self)) is not handed out=None.
    class Handler:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, kwargs

    assert flambeau.inverse(Handler()) == ("inverse", {})
    out = flambeau.empty(0)
    assert flambeau.inverse(Handler(), out=out) == ("inverse", {"out": out})
