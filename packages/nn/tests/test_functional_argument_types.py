"""A non-tensor where F expects a tensor raises TypeError naming the argument, as PyTorch's
argument parser does, not the AttributeError of the first attribute the function reads.

The table lists every (function, tensor parameter) pair for which PyTorch 2.13 raises TypeError
when given an object, a str, a float or a list of str (ctc_loss's lengths, which may also be
tuples, aside). Pairs where PyTorch itself fails with AttributeError (e.g. the l1/mse/huber
losses, interpolate, lp_pool, adaptive 2-d/3-d pooling, max_pool3d_with_indices, max_unpool1d,
embedding_bag) are left out on purpose.
"""

from __future__ import annotations

import inspect
import re

import pytest

import flambeau
from flambeau.nn import functional as F


def _ones(*shape):
    return flambeau.ones(*shape)


def _unary():
    return [_ones(2, 3)], {}


def _pair():
    return [_ones(2, 3), _ones(2, 3)], {}


def _triple():
    return [_ones(2, 3), _ones(2, 3), _ones(2, 3)], {}


def _conv(nd, transposed=False):
    weight = (2, 3) if transposed else (3, 2)
    return lambda: ([_ones(1, 2, *(4,) * nd), _ones(*weight, *(2,) * nd)], {})


def _pool(nd):
    return lambda: ([_ones(1, 2, *(4,) * nd), 2], {})


def _unpool(nd):
    def make():
        out, idx = getattr(F, f"max_pool{nd}d")(_ones(1, 2, *(4,) * nd), 2, return_indices=True)
        return [out, idx, 2], {}

    return make


def _mha():
    x = _ones(3, 1, 4)
    in_proj = [_ones(12, 4), flambeau.zeros(12)]
    return [x, x, x, 4, 2, *in_proj, None, None, False, 0.0, _ones(4, 4), flambeau.zeros(4)], {}


_UNARY = (
    "relu relu_ gelu silu elu elu_ selu selu_ celu celu_ leaky_relu leaky_relu_ relu6 hardtanh "
    "hardtanh_ hardswish hardsigmoid mish softplus logsigmoid softshrink hardshrink dropout "
    "alpha_dropout"
).split()

# (function, a valid call: () -> (args, kwargs), its tensor parameters that must be tensors).
# A parameter beyond the call's positional args is passed by keyword.
TABLE = [
    *((name, _unary, ("input",)) for name in _UNARY),
    ("threshold", lambda: ([_ones(2, 3), 0.5, 0.0], {}), ("input",)),
    ("threshold_", lambda: ([_ones(2, 3), 0.5, 0.0], {}), ("input",)),
    ("linear", lambda: ([_ones(2, 3), _ones(4, 3)], {}), ("input", "weight", "bias")),
    (
        "bilinear",
        lambda: ([_ones(2, 3), _ones(2, 4), _ones(5, 3, 4)], {}),
        ("input1", "input2", "weight", "bias"),
    ),
    ("cosine_similarity", _pair, ("x1", "x2")),
    ("pairwise_distance", _pair, ("x1", "x2")),
    ("soft_margin_loss", _pair, ("input", "target")),
    ("multilabel_soft_margin_loss", _pair, ("input",)),
    ("kl_div", lambda: ([_ones(2, 3), _ones(2, 3)], {"reduction": "sum"}), ("input", "target")),
    ("poisson_nll_loss", _pair, ("input", "target")),
    ("hinge_embedding_loss", lambda: ([_ones(3), _ones(3)], {}), ("input", "target")),
    (
        "cosine_embedding_loss",
        lambda: ([_ones(2, 3), _ones(2, 3), _ones(2)], {}),
        ("input1", "input2", "target"),
    ),
    ("triplet_margin_loss", _triple, ("anchor", "positive", "negative")),
    ("prelu", lambda: ([_ones(2, 3), _ones(3)], {}), ("input", "weight")),
    ("layer_norm", lambda: ([_ones(2, 3), (3,)], {}), ("input", "weight", "bias")),
    (
        "batch_norm",
        lambda: ([_ones(2, 3), flambeau.zeros(3), _ones(3)], {}),
        ("input", "running_mean", "running_var", "weight", "bias"),
    ),
    ("group_norm", lambda: ([_ones(2, 4), 2], {}), ("weight", "bias")),
    (
        "instance_norm",
        lambda: ([_ones(2, 3, 4)], {}),
        ("running_mean", "running_var", "weight", "bias"),
    ),
    ("embedding", lambda: ([flambeau.tensor([0, 1]), _ones(3, 2)], {}), ("input", "weight")),
    (
        "cross_entropy",
        lambda: ([_ones(2, 3), flambeau.tensor([0, 1])], {}),
        ("input", "target", "weight"),
    ),
    (
        "nll_loss",
        lambda: ([_ones(2, 3), flambeau.tensor([0, 1])], {}),
        ("input", "target", "weight"),
    ),
    (
        "ctc_loss",
        lambda: (
            [flambeau.log_softmax(_ones(5, 1, 3), 2), flambeau.tensor([[1, 2]]), (5,), (2,)],
            {},
        ),
        ("log_probs", "targets"),
    ),
    ("binary_cross_entropy_with_logits", _pair, ("weight", "pos_weight")),
    *((f"conv{nd}d", _conv(nd), ("input", "weight", "bias")) for nd in (1, 2, 3)),
    *((f"conv_transpose{nd}d", _conv(nd, True), ("input", "weight", "bias")) for nd in (1, 2, 3)),
    *((f"max_pool{nd}d", _pool(nd), ("input",)) for nd in (1, 2, 3)),
    *((f"max_pool{nd}d_with_indices", _pool(nd), ("input",)) for nd in (1, 2)),
    *((f"avg_pool{nd}d", _pool(nd), ("input",)) for nd in (1, 2, 3)),
    ("adaptive_avg_pool1d", _pool(1), ("input",)),
    ("adaptive_max_pool1d", _pool(1), ("input",)),
    ("adaptive_max_pool1d_with_indices", _pool(1), ("input",)),
    ("max_unpool2d", _unpool(2), ("indices",)),
    ("max_unpool3d", _unpool(3), ("indices",)),
    ("pad", lambda: ([_ones(2, 3), (1, 1)], {}), ("input",)),
    ("pixel_shuffle", lambda: ([_ones(1, 4, 2, 2), 2], {}), ("input",)),
    ("pixel_unshuffle", lambda: ([_ones(1, 1, 4, 4), 2], {}), ("input",)),
    ("unfold", lambda: ([_ones(1, 2, 4, 4), 2], {}), ("input",)),
    ("fold", lambda: ([_ones(1, 8, 9), (4, 4), 2], {}), ("input",)),
    (
        "scaled_dot_product_attention",
        lambda: ([_ones(1, 2, 3)] * 3, {}),
        ("query", "key", "value", "attn_mask"),
    ),
    (
        "multi_head_attention_forward",
        _mha,
        ("in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"),
    ),
]

CASES = [(name, make, param) for name, make, params in TABLE for param in params]
BAD = {"object": object(), "str": "abc", "float": 1.5, "list_of_str": ["a", "b"]}


@pytest.mark.parametrize(("name", "make", "_params"), TABLE, ids=[name for name, *_ in TABLE])
def test_valid_call_runs(name, make, _params):
    # The baseline each case below breaks one argument of.
    args, kwargs = make()
    getattr(F, name)(*args, **kwargs)


@pytest.mark.parametrize("bad", list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize(("name", "make", "param"), CASES, ids=[f"{n}-{p}" for n, _, p in CASES])
def test_non_tensor_argument_raises_type_error(name, make, param, bad):
    fn = getattr(F, name)
    index = list(inspect.signature(fn).parameters).index(param)
    args, kwargs = make()
    if index < len(args):
        args[index] = bad
    else:
        kwargs[param] = bad
    message = (
        f"{name}(): argument '{param}' (position {index + 1}) must be Tensor, not "
        f"{type(bad).__name__}"
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        fn(*args, **kwargs)


def test_the_table_covers_only_public_functions():
    assert {name for name, *_ in TABLE} <= set(F.__all__)
