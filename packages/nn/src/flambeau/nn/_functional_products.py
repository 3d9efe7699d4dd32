"""F.conv_tbc, F.grouped_mm and F.linear_cross_entropy: functions built on matrix products."""

from __future__ import annotations

import flambeau
from flambeau._arg_checks import check_tensor as _check_tensor

# torch.nn.functional.conv_tbc is torch.conv_tbc: the core's is the one implementation.
from flambeau._nn_ops import conv_tbc
from flambeau.overrides import _dispatch_on

__all__ = ["conv_tbc", "grouped_mm", "linear_cross_entropy"]


# ---- grouped_mm -----------------------------------------------------------------------------


def _group_ends(offs, groups, length: int, what: str) -> list[int]:
    """offs as a checked list of group ends along a jagged dimension of `length`."""
    if offs.dim() != 1:
        raise RuntimeError("offs has to be 1D")
    if offs.dtype != flambeau.int32:
        raise RuntimeError("Offsets have to be int32")
    ends = [int(e) for e in offs.tolist()]
    if groups is not None and len(ends) != groups:
        raise RuntimeError("matrix batch sizes have to match")
    start = 0
    for end in ends:
        if end < start or end > length:
            raise RuntimeError(
                f"grouped_mm(): offs must be non-decreasing and at most the {what} "
                f"({length}), got {ends}"
            )
        start = end
    return ends


def _spans(ends):
    return list(zip([0, *ends[:-1]], ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Matrix products of groups (mixture-of-experts layers), one group per slice:

    - 3-D x 3-D: a batched product, offs None;
    - 2-D (M, K) x 3-D (G, K, N): rows of mat_a in groups ending at offs -> (M, N);
    - 3-D (G, M, K) x 2-D (K, N): columns of mat_b in groups ending at offs -> (M, N);
    - 2-D (M, K) x 2-D (K, N): the contraction dimension in groups -> (G, M, N).

    bias (not jagged) is added to each group's product. Output past offs[-1] along the
    jagged dimension is zero.

    >>> import flambeau.nn.functional as F
    >>> a = flambeau.ones(5, 2)
    >>> b = flambeau.stack([flambeau.eye(2), 2 * flambeau.eye(2)])
    >>> F.grouped_mm(a, b, offs=flambeau.tensor([2, 5], dtype=flambeau.int32))
    tensor([[1., 1.],
            [1., 1.],
            [2., 2.],
            [2., 2.],
            [2., 2.]])
    """
    _check_tensor("grouped_mm", "mat_a", 1, mat_a)
    _check_tensor("grouped_mm", "mat_b", 2, mat_b)
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
        if not mat.is_floating_point():
            raise RuntimeError(f"Expected {name} to be a floating-point matrix, got {mat.dtype}")
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(
            f"grouped_mm(): expected mat_a and mat_b of one dtype, got {mat_a.dtype} and "
            f"{mat_b.dtype}"
        )
    low_precision = (flambeau.float16, flambeau.bfloat16)
    if out_dtype is not None and out_dtype != mat_a.dtype:
        if not (out_dtype == flambeau.float32 and mat_a.dtype in low_precision):
            raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
        mat_a, mat_b = mat_a.to(out_dtype), mat_b.to(out_dtype)
    jagged = mat_a.dim() == 2 or mat_b.dim() == 2
    if jagged != (offs is not None):
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")

    def product(a, b):
        out = flambeau.matmul(a, b)
        return out if bias is None else out + bias

    if not jagged:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return product(mat_a, mat_b)
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        rows = mat_a.shape[0]
        ends = _group_ends(offs, mat_b.shape[0], rows, "rows of mat_a")
        pieces = [product(mat_a[s:e], mat_b[g]) for g, (s, e) in enumerate(_spans(ends))]
        tail = rows - (ends[-1] if ends else 0)
        pieces.append(flambeau.zeros((tail, mat_b.shape[2]), dtype=mat_a.dtype))
        return flambeau.cat(pieces, 0)
    if mat_a.dim() == 3:
        cols = mat_b.shape[1]
        ends = _group_ends(offs, mat_a.shape[0], cols, "columns of mat_b")
        pieces = [product(mat_a[g], mat_b[:, s:e]) for g, (s, e) in enumerate(_spans(ends))]
        tail = cols - (ends[-1] if ends else 0)
        pieces.append(flambeau.zeros((mat_a.shape[1], tail), dtype=mat_a.dtype))
        return flambeau.cat(pieces, 1)
    depth = mat_a.shape[1]
    ends = _group_ends(offs, None, depth, "contraction length")
    products = [product(mat_a[:, s:e], mat_b[s:e]) for s, e in _spans(ends)]
    if not products:
        return flambeau.zeros((0, mat_a.shape[0], mat_b.shape[1]), dtype=mat_a.dtype)
    return flambeau.stack(products, 0)


# ---- linear_cross_entropy -------------------------------------------------------------------


@_dispatch_on("input", "linear_weight", "target", "linear_bias", "weight")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction: str = "mean", ignore_index=None, label_smoothing: float = 0.0,
                         options=None):  # fmt: skip
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...).

    input is (in_features,) or (N, in_features); linear_weight (C, in_features) or
    (C, d_1, ..., d_K, in_features) for a K-dimensional loss over batched input. `options`
    (PyTorch's request for a batch-chunked, memory-saving evaluation) is accepted; flambeau
    evaluates the same loss in one piece.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> w = flambeau.tensor([[2.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    >>> F.linear_cross_entropy(x, w, flambeau.tensor([0, 2]), reduction="none")
    tensor([0.2395, 1.0986])
    """
    from .functional import cross_entropy, linear

    _check_tensor("linear_cross_entropy", "input", 1, input)
    _check_tensor("linear_cross_entropy", "linear_weight", 2, linear_weight)
    _check_tensor("linear_cross_entropy", "target", 3, target)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes = linear_weight.shape[0]
    extra = tuple(linear_weight.shape[1:-1])  # (d_1, ..., d_K) of a K-dimensional loss
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *extra):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *extra)}, got {tuple(linear_bias.shape)}"
        )
    batch = tuple(input.shape[:-1])
    if extra and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batch, classes, *extra)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    flat_weight = linear_weight.reshape(-1, in_features)
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, flat_weight, flat_bias).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
