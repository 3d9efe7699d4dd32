"""flambeau.nn.functional's Python functions take part in ``__torch_function__`` as
PyTorch's do: a TorchFunctionMode and a Tensor subclass are handed the public function
itself (F.relu, F.cross_entropy, ...), once, rather than the operators it calls inside.

The table lists, for one call of each function, the name PyTorch hands over; the oracle
test checks it against PyTorch itself where it is installed."""

from __future__ import annotations

import inspect
import warnings

import pytest

import flambeau
import flambeau.nn.functional as F
from flambeau.overrides import (
    TorchFunctionMode,
    _disabled_torch_function_impl,
    has_torch_function_variadic,
    redispatch_function,
)
from flambeau_testing.dispatch_log import handed_over as _run
from flambeau_testing.dispatch_log import log_mode as _log_mode
from flambeau_testing.dispatch_log import names as _names


def _r(L, *shape):
    return L.rand(*shape, generator=L.Generator().manual_seed(0))


def _nn(L):
    return L.nn.functional


def _x(L):
    return _r(L, 2, 3, 4)


def _img(L):
    return _r(L, 1, 2, 6, 6)


def _vol(L):
    return _r(L, 1, 2, 4, 4, 4)


def _seq(L):
    return _r(L, 1, 2, 6)


def _cases():
    """(id, the name handed to __torch_function__, build(L) -> (function, args, kwargs))."""
    out = []

    def case(cid, expected, build):
        out.append(pytest.param(expected, build, id=cid))

    def on(name, *args, **kwargs):
        return lambda L: (
            getattr(_nn(L), name),
            tuple(a(L) if callable(a) else a for a in args),
            {k: v(L) if callable(v) else v for k, v in kwargs.items()},
        )

    for name in (
        "relu relu6 selu celu elu silu mish hardswish hardsigmoid softsign tanhshrink "
        "sigmoid tanh gelu softplus softshrink hardshrink hardtanh leaky_relu rrelu glu "
        "normalize dropout alpha_dropout feature_alpha_dropout dropout1d relu_ elu_ celu_ "
        "selu_ leaky_relu_ hardtanh_ rrelu_"
    ).split():
        case(name, name, on(name, _x))
    case("logsigmoid", "log_sigmoid", on("logsigmoid", _x))
    case("dropout2d", "dropout2d", on("dropout2d", _img))
    case("dropout3d", "dropout3d", on("dropout3d", _vol))
    # PyTorch's F.threshold is a function named _threshold; flambeau's keeps its own name.
    case("threshold", "threshold", on("threshold", _x, 0.5, 0.0))
    case("threshold_", "threshold_", on("threshold_", _x, 0.5, 0.0))
    for name in ("softmax", "softmin", "log_softmax"):
        case(name, name, on(name, _x, dim=-1))
    case("gumbel_softmax", "gumbel_softmax", on("gumbel_softmax", _x))
    case(
        "linear",
        "linear",
        on("linear", lambda L: _r(L, 2, 4), lambda L: _r(L, 3, 4), lambda L: _r(L, 3)),
    )
    case(
        "bilinear",
        "bilinear",
        on("bilinear", lambda L: _r(L, 2, 4), lambda L: _r(L, 2, 5), lambda L: _r(L, 3, 4, 5)),
    )
    four = lambda L: _r(L, 4)  # noqa: E731
    case("layer_norm", "layer_norm", on("layer_norm", _x, (4,), four, four))
    case("rms_norm", "rms_norm", on("rms_norm", _x, (4,), four))
    case("group_norm", "group_norm", on("group_norm", _x, 1))
    case("local_response_norm", "local_response_norm", on("local_response_norm", _x, 2))
    case(
        "batch_norm", "batch_norm", on("batch_norm", _x, lambda L: L.zeros(3), lambda L: L.ones(3))
    )
    case("instance_norm", "instance_norm", on("instance_norm", _x))
    for name in (
        "l1_loss mse_loss smooth_l1_loss huber_loss soft_margin_loss kl_div "
        "binary_cross_entropy binary_cross_entropy_with_logits multilabel_soft_margin_loss "
        "poisson_nll_loss hinge_embedding_loss"
    ).split():
        case(name, name, on(name, _x, _x))
    case(
        "gaussian_nll_loss",
        "gaussian_nll_loss",
        on("gaussian_nll_loss", _x, _x, lambda L: L.ones(2, 3, 4)),
    )
    classes = lambda L: L.tensor([0, 2])  # noqa: E731
    logits = lambda L: _r(L, 2, 3)  # noqa: E731
    for name in ("cross_entropy", "nll_loss", "multi_margin_loss"):
        case(name, name, on(name, logits, classes))
    case(
        "multilabel_margin_loss",
        "multilabel_margin_loss",
        on("multilabel_margin_loss", logits, lambda L: L.tensor([[0, -1, 0], [1, 2, -1]])),
    )
    signs = lambda L: L.tensor([1.0, -1.0, 1.0])  # noqa: E731
    case(
        "margin_ranking_loss",
        "margin_ranking_loss",
        on("margin_ranking_loss", lambda L: _r(L, 3), lambda L: _r(L, 3), signs),
    )
    pairs = lambda L: _r(L, 3, 2)  # noqa: E731
    case(
        "cosine_embedding_loss",
        "cosine_embedding_loss",
        on("cosine_embedding_loss", pairs, pairs, signs),
    )
    for name in ("triplet_margin_loss", "triplet_margin_with_distance_loss"):
        case(name, name, on(name, pairs, pairs, pairs))
    case(
        "ctc_loss",
        "ctc_loss",
        on(
            "ctc_loss",
            lambda L: _r(L, 5, 1, 3).log_softmax(2),
            lambda L: L.tensor([[1, 2]]),
            lambda L: L.tensor([5]),
            lambda L: L.tensor([2]),
        ),
    )
    case("embedding", "embedding", on("embedding", classes, lambda L: _r(L, 3, 4)))
    case(
        "embedding_bag",
        "embedding_bag",
        on(
            "embedding_bag",
            lambda L: L.tensor([0, 2, 1]),
            lambda L: _r(L, 3, 4),
            lambda L: L.tensor([0, 1]),
        ),
    )
    case("one_hot", "one_hot", on("one_hot", classes))
    for d, inp in ((1, _seq), (2, _img), (3, _vol)):
        for kind in ("max_pool", "avg_pool", "adaptive_max_pool", "adaptive_avg_pool"):
            case(f"{kind}{d}d", f"{kind}{d}d", on(f"{kind}{d}d", inp, 2))
        case(f"lp_pool{d}d", f"lp_pool{d}d", on(f"lp_pool{d}d", inp, 2.0, 2))
        for kind in ("max_pool", "adaptive_max_pool"):
            # return_indices=True: PyTorch hands over the *_with_indices function
            name = f"{kind}{d}d_with_indices"
            case(f"{kind}{d}d-indices", name, on(f"{kind}{d}d", inp, 2, return_indices=True))
            case(name, name, on(name, inp, 2))
        case(
            f"max_unpool{d}d",
            f"max_unpool{d}d",
            lambda L, d=d, inp=inp: (
                getattr(_nn(L), f"max_unpool{d}d"),
                (*getattr(_nn(L), f"max_pool{d}d")(inp(L), 2, return_indices=True), 2),
                {},
            ),
        )
        case(f"conv{d}d", f"conv{d}d", on(f"conv{d}d", inp, lambda L, d=d: _r(L, 3, 2, *[1] * d)))
        case(
            f"conv_transpose{d}d",
            f"conv_transpose{d}d",
            on(f"conv_transpose{d}d", inp, lambda L, d=d: _r(L, 2, 3, *[1] * d)),
        )
    for d, inp in ((2, _img), (3, _vol)):
        name = f"fractional_max_pool{d}d"
        case(name, name, on(name, inp, 2, output_size=2))
        case(
            f"{name}-indices",
            f"{name}_with_indices",
            on(name, inp, 2, output_size=2, return_indices=True),
        )
        case(
            f"{name}_with_indices",
            f"{name}_with_indices",
            on(f"{name}_with_indices", inp, 2, output_size=2),
        )
    case("pad", "pad", on("pad", _x, (1, 1)))
    for name in ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear"):
        # the deprecated upsample functions call interpolate, which hands itself over
        case(name, "interpolate", on(name, _img, scale_factor=2))
    case("unfold", "unfold", on("unfold", _img, 2))
    case("fold", "fold", on("fold", lambda L: _r(L, 1, 8, 9), (4, 4), 2))
    case("pixel_shuffle", "pixel_shuffle", on("pixel_shuffle", lambda L: _r(L, 1, 4, 2, 2), 2))
    case("pixel_unshuffle", "pixel_unshuffle", on("pixel_unshuffle", _img, 2))
    case(
        "channel_shuffle", "channel_shuffle", on("channel_shuffle", lambda L: _r(L, 1, 4, 2, 2), 2)
    )
    case(
        "affine_grid",
        "affine_grid",
        on("affine_grid", lambda L: _r(L, 1, 2, 3), (1, 1, 4, 4), align_corners=False),
    )
    case(
        "grid_sample",
        "grid_sample",
        on("grid_sample", _img, lambda L: _r(L, 1, 3, 3, 2), align_corners=False),
    )
    for name in ("cosine_similarity", "pairwise_distance"):
        case(name, name, on(name, pairs, pairs))
    case("pdist", "pdist", on("pdist", pairs))
    case("prelu", "prelu", on("prelu", _x, lambda L: _r(L, 1)))
    qkv = lambda L: _r(L, 1, 2, 4)  # noqa: E731
    case(
        "scaled_dot_product_attention",
        "scaled_dot_product_attention",
        on("scaled_dot_product_attention", qkv, qkv, qkv),
    )
    case(
        "linear_cross_entropy",
        "linear_cross_entropy",
        on("linear_cross_entropy", lambda L: _r(L, 2, 4), lambda L: _r(L, 3, 4), classes),
    )
    seq = lambda L: _r(L, 2, 1, 4)  # noqa: E731
    case(
        "multi_head_attention_forward",
        "multi_head_attention_forward",
        on(
            "multi_head_attention_forward",
            seq,
            seq,
            seq,
            4,
            2,
            lambda L: _r(L, 12, 4),
            lambda L: _r(L, 12),
            None,
            None,
            False,
            0.0,
            lambda L: _r(L, 4, 4),
            lambda L: _r(L, 4),
            need_weights=False,
        ),
    )
    return out


CASES = _cases()


@pytest.mark.parametrize(("expected", "build"), CASES)
def test_mode_and_subclass_see_the_public_function(expected, build):
    fn, mode_funcs, sub_funcs = _run(flambeau, build)
    assert _names(mode_funcs) == [expected]
    assert _names(sub_funcs) == ([expected] if fn is not F.one_hot else [])  # int input only
    if fn.__name__ == expected and "handle_torch_function" in getattr(
        getattr(fn, "__code__", None), "co_names", ()
    ):
        assert mode_funcs[0] is fn  # the public function itself, not an inner operator


@pytest.mark.parametrize(("expected", "build"), CASES)
def test_same_calls_as_pytorch(expected, build):
    torch = pytest.importorskip("torch")
    _, mode_funcs, sub_funcs = _run(torch, build)
    theirs = ["threshold" if n == "_threshold" else n for n in _names(mode_funcs)]
    assert theirs == [expected]
    assert _names(sub_funcs) == ([] if expected == "one_hot" else _names(mode_funcs))


@pytest.mark.parametrize(("expected", "build"), CASES)
def test_plain_tensors_give_the_same_results(expected, build):
    fn, args, kwargs = build(flambeau)
    inner = inspect.unwrap(fn) if inspect.isfunction(fn) else fn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if (
            "dropout" in expected
            or "rrelu" in expected
            or "fractional" in expected
            or ("gumbel" in expected)
        ):
            flambeau.manual_seed(0)
            ours = fn(*build(flambeau)[1], **kwargs)
            flambeau.manual_seed(0)
            theirs = inner(*build(flambeau)[1], **kwargs)
        else:
            ours, theirs = fn(*args, **kwargs), inner(*build(flambeau)[1], **kwargs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, flambeau.Tensor):
            assert type(a) is flambeau.Tensor
            assert flambeau.equal(a, b)


class _Tagged:
    """A tensor-like that answers every function with its name."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func, args, kwargs)


@pytest.mark.parametrize(
    ("fn", "call"),
    [
        (F.relu, lambda t: F.relu(t, inplace=True)),
        (F.cross_entropy, lambda t: F.cross_entropy(t, flambeau.tensor([0]), label_smoothing=0.1)),
        (F.layer_norm, lambda t: F.layer_norm(flambeau.ones(2, 3), (3,), t)),
        (F.interpolate, lambda t: F.interpolate(t, scale_factor=2)),
        (F.max_pool2d, lambda t: F.max_pool2d(t, 2)),
        (F.linear, lambda t: F.linear(flambeau.ones(2, 3), t)),
        (
            F.multi_head_attention_forward,
            lambda t: F.multi_head_attention_forward(
                t, t, t, 4, 2, None, None, None, None, False, 0.0, None, None
            ),
        ),
    ],
)
def test_an_overrides_result_is_returned(fn, call):
    tag = _Tagged()
    result = call(tag)
    assert result[0] == "handled" and result[1] is fn
    assert tag in result[2] or tag in result[3].values()


def test_arguments_are_handed_over_as_given():
    tag = _Tagged()
    _, func, args, kwargs = F.cross_entropy(tag, tag, reduction="sum")
    assert func is F.cross_entropy and args == (tag, tag)
    assert kwargs["reduction"] == "sum" and kwargs["weight"] is None
    _, func, args, kwargs = F.pad(tag, (1, 1), value=3.0)
    assert func is F.pad and args == (tag, (1, 1)) and kwargs == {"mode": "constant", "value": 3.0}


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

    x = flambeau.randn(2, 3).as_subclass(Quiet)
    assert not has_torch_function_variadic(x, flambeau.ones(3), None)
    out = F.layer_norm(x, (3,))
    F.cross_entropy(x, flambeau.tensor([0, 1]))
    assert Logged.funcs == []
    assert type(out) is flambeau.Tensor
    assert flambeau.allclose(out, F.layer_norm(x.as_subclass(flambeau.Tensor), (3,)))
    param = flambeau.nn.Parameter(flambeau.randn(3, 3))  # nn.Parameter opts out too
    x = flambeau.ones(2, 3)
    with _log_mode(flambeau) as mode:
        F.linear(x, param)
    assert mode.funcs == [F.linear]


def test_signature_name_and_docstring_are_the_functions():
    for name in (
        "relu",
        "cross_entropy",
        "interpolate",
        "max_pool2d",
        "layer_norm",
        "linear",
        "multi_head_attention_forward",
        "fractional_max_pool2d",
    ):
        fn = getattr(F, name)
        inner = inspect.unwrap(fn)
        assert fn is not inner and fn.__name__ == name
        assert fn.__module__ == inner.__module__ and fn.__doc__ == inner.__doc__
        assert inspect.signature(fn) == inspect.signature(inner)
        assert inspect.signature(fn, follow_wrapped=False).parameters.keys() == (
            inspect.signature(inner).parameters.keys()
        )


def test_redispatch_runs_the_function_underneath():
    class Traced(flambeau.Tensor):
        __slots__ = ()
        names: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.names.append(func.__name__)
            return redispatch_function(func, types, args, kwargs)

    x = flambeau.tensor([-1.0, 2.0]).as_subclass(Traced)
    out = F.softsign(x)
    assert Traced.names[0] == "softsign" and len(Traced.names) > 1  # then its operators
    assert flambeau.allclose(out.as_subclass(flambeau.Tensor), flambeau.tensor([-0.5, 2 / 3]))


def test_modes_nest_and_see_one_call_each():
    x, target = flambeau.randn(2, 3), flambeau.tensor([0, 2])
    with _log_mode(flambeau) as outer, _log_mode(flambeau) as inner:
        F.cross_entropy(x, target)
    assert _names(inner.funcs) == ["cross_entropy"]
    assert _names(outer.funcs) == ["cross_entropy"]  # the inner mode ran it, handing it down


def test_disable_torch_function_turns_dispatch_off():
    class Logged(flambeau.Tensor):
        __slots__ = ()
        funcs: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.funcs.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    x = flambeau.randn(2, 3).as_subclass(Logged)
    with flambeau.overrides.DisableTorchFunctionSubclass():
        F.relu(x)
    with _log_mode(flambeau) as mode, flambeau.overrides.DisableTorchFunction():
        F.relu(x)
    assert Logged.funcs == [] and mode.funcs == []
    with _log_mode(flambeau) as mode, flambeau.overrides.DisableTorchFunctionSubclass():
        F.relu(x)
    assert mode.funcs == [F.relu]  # modes still run within DisableTorchFunctionSubclass


def test_torch_function_mode_is_exported():
    assert flambeau.overrides.TorchFunctionMode is TorchFunctionMode


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.softmax(flambeau.rand(2, 3)),
        lambda: F.log_softmax(flambeau.rand(2, 3)),
        lambda: F.dropout2d(flambeau.rand(2, 3)),
        lambda: F.kl_div(flambeau.rand(2, 3), flambeau.rand(2, 3)),
        lambda: F.l1_loss(flambeau.rand(2, 3), flambeau.rand(3)),
        lambda: F.affine_grid(flambeau.rand(1, 2, 3), (1, 1, 4, 4)),
        lambda: F.gumbel_softmax(flambeau.rand(2, 3), eps=1e-3),
    ],
)
def test_warnings_point_at_the_caller(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught and {w.filename for w in caught} == {__file__}
