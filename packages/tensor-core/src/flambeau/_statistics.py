"""PyTorch's statistics, distances and numerical calculus built from core operators: cov,
corrcoef, quantile/nanquantile, histogram/histogramdd, cdist, pdist, dist, renorm,
trapezoid/cumulative_trapezoid, gradient and isin.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings

from flambeau import _C
from flambeau._arg_checks import check_tensor, wrap_dim
from flambeau._autocast_policy import autocast_policy
from flambeau._named_tuples import named_tuple
from flambeau._out import into_out
from flambeau._shape_composites import broadcast_shapes, triu_indices
from flambeau.overrides import _dispatch_on


def _float_dtype(t):
    return t.dtype if (t.is_floating_point() or t.is_complex()) else _C.get_default_dtype()


# ---- covariance -----------------------------------------------------------------------------


def _check_weights(name, w, n, floating):
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.dim()} dimensions"
        )
    if w.numel() != n:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n}"
        )
    if floating and not w.is_floating_point():
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {w.dtype}")
    if not floating and (w.is_floating_point() or w.is_complex()):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {w.dtype}")
    if w.numel() and builtins.bool((w < 0).any().item()):
        raise RuntimeError(f"cov(): {name} cannot have negative values")


@_dispatch_on("input", "fweights", "aweights")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of input's rows (variables) over its columns (observations),
    optionally with integer frequency weights and float observation weights.

    >>> x = flambeau.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    >>> flambeau.cov(x)
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions"
        )
    x = input.reshape(1, -1) if input.dim() < 2 else input
    x = x.to(_float_dtype(x))
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, floating=False)
        w = fweights.reshape(-1)
    if aweights is not None:
        _check_weights("aweights", aweights, n, floating=True)
        w = aweights.reshape(-1) if w is None else w * aweights.reshape(-1)
    if w is None:
        w_sum = float(n)
        avg = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        w = w.to(x.real.dtype if x.is_complex() else x.dtype)
        w_sum_t = w.sum()
        w_sum = w_sum_t.item()
        avg = (x * w).sum(1, keepdim=True) / w_sum_t
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.reshape(-1)).sum().item() / w_sum
    if w_sum == 0:
        warnings.warn("cov(): weights sum to zero, can't be normalized", UserWarning, stacklevel=3)
    if norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0", UserWarning, stacklevel=3)
        norm = 0.0
    centred = x - avg
    weighted = centred if w is None else centred * w
    c = _C.matmul(centred, weighted.t().conj()) / norm
    return c.squeeze()  # one variable: a 0-D variance


@_dispatch_on("input")
def corrcoef(input):
    """Pearson correlation coefficients of input's rows, clipped to [-1, 1].

    >>> x = flambeau.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [1.0, 2.0, 4.0]])
    >>> flambeau.corrcoef(x)
    tensor([[ 1.0000, -1.0000,  0.9820],
            [-1.0000,  1.0000, -0.9820],
            [ 0.9820, -0.9820,  1.0000]])
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = _C.diagonal(c).real.sqrt() if c.is_complex() else _C.diagonal(c).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.is_complex():
        return _C.complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---- quantiles ------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
            f"Got {interpolation}"
        )
    scalar_q = not isinstance(q, _C.Tensor)
    if scalar_q:
        qs = _C.tensor([builtins.float(q)], dtype=input.dtype)
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = q.dim() == 0
        qs = q.reshape(-1)
    if qs.numel() and builtins.bool(((qs < 0) | (qs > 1)).any().item()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x = input.reshape(-1)
    else:
        dim = wrap_dim(dim, input.dim())
        x = input.reshape(1) if input.dim() == 0 else input.movedim(dim, -1)
    v = x.sort(-1)[0]  # NaNs sort last
    nan = v.isnan()
    n = v.shape[-1]
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else _C.full(v.shape[:-1] + (1,), n)
    rank = (qs * (count - 1).to(v.dtype)).clamp_min(0)  # (*batch, Q)
    lo = rank.floor().to(_C.int64)
    hi = rank.ceil().to(_C.int64)
    if interpolation == "nearest":
        lo = hi = rank.round().to(_C.int64)
    v_lo = v.gather(-1, lo)
    if interpolation in ("lower", "nearest"):
        out = v_lo
    else:
        v_hi = v.gather(-1, hi)
        if interpolation == "higher":
            out = v_hi
        elif interpolation == "midpoint":
            out = _C.lerp(v_lo, v_hi, 0.5)
        else:
            out = _C.lerp(v_lo, v_hi, rank - lo.to(v.dtype))
    invalid = (count == 0) if ignore_nan else nan[..., -1:]
    out = _C.where(invalid, _C.full((), math.nan, dtype=out.dtype), out)
    out = out.movedim(-1, 0)  # (Q, *batch)
    if keepdim:
        if dim is None:
            out = out.reshape((out.shape[0],) + (1,) * input.dim())
        elif input.dim() > 0:
            out = out.unsqueeze(dim + 1)
    return out[0] if scalar_q else out


@_dispatch_on("input", "q", "out")
@autocast_policy("fp32")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of input (flattened, or along dim); NaN where a slice has a NaN.
    A 1-D q adds a leading dim. interpolation: linear, lower, higher, midpoint, nearest.

    >>> x = flambeau.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    >>> flambeau.quantile(x, 0.25)
    tensor(1.)
    >>> flambeau.quantile(x, flambeau.tensor([0.1, 0.5]))
    tensor([0.4000, 2.0000])
    """
    res = _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)
    return res if out is None else out.copy_(res)


@_dispatch_on("input", "q", "out")
@autocast_policy("fp32")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaNs (NaN only where a slice holds nothing else).

    >>> x = flambeau.tensor([1.0, float("nan"), 3.0])
    >>> flambeau.nanquantile(x, 0.5)
    tensor(2.)
    >>> flambeau.quantile(x, 0.5)
    tensor(nan)
    """
    res = _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
    return res if out is None else out.copy_(res)


# ---- histograms -----------------------------------------------------------------------------


def _bin_edges(values, bins, lo_hi, dtype):
    if isinstance(bins, _C.Tensor):
        if bins.dim() != 1 or bins.numel() < 2:
            raise RuntimeError("histogramdd(): bins tensors must be 1-D with at least 2 edges")
        return bins.to(dtype)
    if bins <= 0:
        raise RuntimeError(f"histogramdd(): bins must be > 0, but got {bins}")
    if lo_hi is not None:
        lo, hi = builtins.float(lo_hi[0]), builtins.float(lo_hi[1])
    elif values.numel():
        lo, hi = values.min().item(), values.max().item()
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"histogramdd(): expected min <= max, got min={lo}, max={hi}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"histogramdd(): range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _C.linspace(lo, hi, bins + 1, dtype=dtype)


@_dispatch_on("input", "bins", "weight")
def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """The D-dimensional histogram of the points input[..., :D]: (hist, tuple of bin edges).
    bins: an int, D ints, or D tensors of edges; range: D (min, max) pairs, flattened.

    >>> points = flambeau.tensor([[0.0, 0.0], [1.0, 1.0], [1.5, 0.5]])
    >>> hist, edges = flambeau.histogramdd(points, bins=[2, 2])
    >>> hist
    tensor([[1., 0.],
            [0., 2.]])
    >>> edges
    (tensor([0.0000, 0.7500, 1.5000]), tensor([0.0000, 0.5000, 1.0000]))
    """
    if not input.is_floating_point():
        raise RuntimeError(
            f"torch.histogramdd: input tensor must be floating point, got {input.dtype}"
        )
    if input.dim() < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension")
    d = input.shape[-1]
    points = input.reshape(-1, d)
    if isinstance(bins, (builtins.int, _C.Tensor)):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise RuntimeError(
            f"torch.histogramdd: expected {d} sequences of bin edges for each of the {d} "
            f"dimensions of the histogram but got {len(bins)}"
        )
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(
            f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} "
            f"elements, but got {len(range)}"
        )
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension"
        )
    edges, flat, inside = [], None, None
    for j in builtins.range(d):
        col = points[:, j]
        lo_hi = None if range is None else (range[2 * j], range[2 * j + 1])
        e = _bin_edges(col, bins[j], lo_hi, input.dtype)
        nb = e.shape[0] - 1
        # bin i holds [e[i], e[i+1]); the last bin also holds its right edge.
        idx = _C.searchsorted(e, col.contiguous(), right=True) - 1
        idx = _C.where(col == e[-1], _C.full((), nb - 1), idx)
        ok = (col >= e[0]) & (col <= e[-1])
        inside = ok if inside is None else inside & ok
        flat = idx if flat is None else flat * nb + idx
        edges.append(e)
    shape = tuple(e.shape[0] - 1 for e in edges)
    total = math.prod(shape)
    w = _C.ones(points.shape[0], dtype=input.dtype) if weight is None else weight.reshape(-1)
    kept = _C.nonzero(inside).reshape(-1)
    hist = _C.zeros(total, dtype=input.dtype).index_add(
        0, flat.index_select(0, kept), w.to(input.dtype).index_select(0, kept)
    )
    hist = hist.reshape(shape)
    if density:
        volume = None
        for j, e in enumerate(edges):
            width = e.diff().reshape([-1 if k == j else 1 for k in builtins.range(d)])
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return named_tuple("histogramdd", ("hist", "bin_edges"))(hist, tuple(edges))


@_dispatch_on("input", "bins", "weight", "out")
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """The histogram of input's values: (hist, bin_edges); bins is an int (100 by default)
    or a tensor of edges. out= is a (hist, bin_edges) pair to write into.

    >>> hist, edges = flambeau.histogram(flambeau.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)
    >>> hist
    tensor([2., 1., 1.])
    >>> edges
    tensor([1., 2., 3., 4.])
    """
    h = histogramdd(
        input.reshape(-1, 1),
        [bins],
        range=range,
        weight=None if weight is None else weight.reshape(-1),
        density=density,
    )
    hist, edges = h.hist, h.bin_edges[0]
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("histogram(): out= must be a tuple of 2 tensors (hist, bin_edges)")
        hist, edges = into_out(out[0], hist), into_out(out[1], edges)
    return named_tuple("histogram", ("hist", "bin_edges"))(hist, edges)


# ---- distances ------------------------------------------------------------------------------


def _check_cdist(x1, x2, p):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


_CDIST_MODES = (
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


@_dispatch_on("x1", "x2")
@autocast_policy("fp32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between every row of x1 (..., P, M) and of x2 (..., R, M).

    >>> a = flambeau.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> b = flambeau.tensor([[3.0, 4.0]])
    >>> flambeau.cdist(a, b)
    tensor([[5.0000],
            [3.6056]])
    """
    _check_cdist(x1, x2, p)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    a = x1.expand(batch + tuple(x1.shape[-2:]))
    b = x2.expand(batch + tuple(x2.shape[-2:]))
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or compute_mode == _CDIST_MODES[0]
        and (a.shape[-2] > 25 or b.shape[-2] > 25)
    )
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matmul instead of a (P, R, M) difference.
        sq = (a * a).sum(-1, keepdim=True) + (b * b).sum(-1).unsqueeze(-2)
        return (sq - 2 * _C.matmul(a, b.transpose(-2, -1))).clamp_min(0).sqrt()
    diff = a.unsqueeze(-2) - b.unsqueeze(-3)
    return _C.linalg_vector_norm(diff, p, -1)


@_dispatch_on("input")
def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D input, pairs i < j in row-major order.

    >>> flambeau.pdist(flambeau.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    tensor([ 5., 10.,  5.])
    """
    check_tensor("pdist", "input", 1, input)
    if not isinstance(p, numbers.Real):
        raise TypeError(f"pdist(): argument 'p' (position 2) must be float, not {type(p).__name__}")
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1)
    diff = input.index_select(0, i) - input.index_select(0, j)
    if p != math.inf:
        return _C.linalg_vector_norm(diff, p, -1)
    magnitude = diff.abs()
    if diff.shape[1] == 0:
        return magnitude.sum(-1)  # the largest of no entries: 0, as PyTorch has it
    largest = magnitude.amax(-1, keepdim=True)
    # PyTorch's subgradient: every entry that ties for the largest gets the full sign of its
    # difference (amax would share it among the ties); the added term is 0 in value.
    largest = largest.detach()
    ties = (magnitude.detach() == largest).to(diff.dtype)
    return largest.squeeze(-1) + ((magnitude - magnitude.detach()) * ties).sum(-1)


@_dispatch_on("input", "other")
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast).

    >>> flambeau.dist(flambeau.tensor([1.0, 1.0]), flambeau.tensor([4.0, 5.0]))
    tensor(5.)
    >>> flambeau.dist(flambeau.tensor([1.0, 1.0]), flambeau.tensor([4.0, 5.0]), p=1)
    tensor(7.)
    """
    return _C.linalg_vector_norm(input - other, p)


@_dispatch_on("input", "out")
def renorm(input, p, dim, maxnorm, *, out=None):
    """input with each slice along dim whose p-norm exceeds maxnorm scaled down to maxnorm.

    >>> x = flambeau.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> flambeau.renorm(x, p=2, dim=0, maxnorm=1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions"
        )
    dim = wrap_dim(dim, input.dim())
    others = tuple(d for d in builtins.range(input.dim()) if d != dim)
    norms = _C.linalg_vector_norm(input, p, others, keepdim=True)
    scale = _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), _C.ones((), dtype=norms.dtype))
    res = input * scale
    return res if out is None else out.copy_(res)


def _renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self, p, dim, maxnorm))


# ---- integration and differentiation --------------------------------------------------------


def _trapezoid_widths(y, x, dx, dim):
    if x is None:
        return None, 1 if dx is None else dx
    if x.dim() == 1:
        dxs = x.diff()
        shape = [1] * y.dim()
        shape[dim] = -1
        return dxs.reshape(shape), None
    return x.diff(dim=dim), None


@_dispatch_on("y", "x")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along dim by the trapezoidal rule, with sample points x or spacing dx.

    >>> y = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.trapezoid(y)
    tensor(4.)
    >>> flambeau.trapezoid(y, flambeau.tensor([0.0, 1.0, 3.0]))
    tensor(6.5000)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received both x and dx; pass one")
    dim = wrap_dim(dim, y.dim())
    n = y.shape[dim] if y.dim() else 0
    if n == 0:
        return _C.zeros(tuple(s for i, s in enumerate(y.shape) if i != dim), dtype=_float_dtype(y))
    widths, step = _trapezoid_widths(y, x, dx, dim)
    pair_sums = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if widths is None:
        return pair_sums.sum(dim) * step / 2.0
    return (pair_sums * widths).sum(dim) / 2.0


@_dispatch_on("y", "x")
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of trapezoid.

    >>> flambeau.trapz(flambeau.tensor([1.0, 2.0, 3.0]), dx=0.5)
    tensor(2.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


@_dispatch_on("y", "x")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of y along dim (one fewer element along dim).

    >>> flambeau.cumulative_trapezoid(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received both x and dx; pass one")
    dim = wrap_dim(dim, y.dim())
    n = y.shape[dim]
    widths, step = _trapezoid_widths(y, x, dx, dim)
    pair_sums = y.narrow(dim, 1, builtins.max(n - 1, 0)) + y.narrow(dim, 0, builtins.max(n - 1, 0))
    if widths is None:
        return (pair_sums * step / 2.0).cumsum(dim)
    return (pair_sums * widths / 2.0).cumsum(dim)


def _spacings(input, spacing, dims):
    """One entry per dim: a number (uniform step) or a 1-D tensor of coordinates."""
    if isinstance(spacing, (builtins.int, builtins.float)):
        return [spacing] * len(dims)
    if isinstance(spacing, _C.Tensor) and spacing.dim() == 0:
        return [spacing.item()] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], _C.Tensor):
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}."
        )
    out = []
    for s, d in zip(spacing, dims):
        if isinstance(s, _C.Tensor) and s.dim() == 0:
            s = s.item()
        if isinstance(s, _C.Tensor) and s.shape[0] != input.shape[d]:
            raise RuntimeError(
                f"torch.gradient expected each tensor to be on the same device and have the "
                f"same length as the dimension it spans, but got a tensor of length "
                f"{s.shape[0]} for dim {d} of size {input.shape[d]}"
            )
        out.append(s)
    return out


def _gradient_along(f, h, dim, edge_order):
    n = f.shape[dim]

    def sl(start, length):
        return f.narrow(dim, start, length)

    def along(t):
        shape = [1] * f.dim()
        shape[dim] = -1
        return t.reshape(shape)

    if not isinstance(h, _C.Tensor):
        interior = (sl(2, n - 2) - sl(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            first = (sl(1, 1) - sl(0, 1)) / h
            last = (sl(n - 1, 1) - sl(n - 2, 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2.0 * sl(1, 1) - 0.5 * sl(2, 1)) / h
            last = (0.5 * sl(n - 3, 1) - 2.0 * sl(n - 2, 1) + 1.5 * sl(n - 1, 1)) / h
        return _C.cat([first, interior, last], dim)
    x = h.to(_float_dtype(f) if not h.is_floating_point() else h.dtype)
    dx = x.diff()
    hs, hd = along(dx[:-1]), along(dx[1:])  # the steps before and after each interior point
    interior = (
        hs * hs * sl(2, n - 2) + (hd * hd - hs * hs) * sl(1, n - 2) - hd * hd * sl(0, n - 2)
    ) / (hs * hd * (hd + hs))
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / dx[0]
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / dx[-1]
    else:
        a, b = dx[0], dx[1]
        first = (
            -(2.0 * a + b) / (a * (a + b)) * sl(0, 1)
            + (a + b) / (a * b) * sl(1, 1)
            - a / (b * (a + b)) * sl(2, 1)
        )
        a, b = dx[-2], dx[-1]
        last = (
            b / (a * (a + b)) * sl(n - 3, 1)
            - (a + b) / (a * b) * sl(n - 2, 1)
            + (2.0 * b + a) / (b * (a + b)) * sl(n - 1, 1)
        )
    return _C.cat([first, interior, last], dim)


@_dispatch_on("input", "spacing")
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the derivative of input along each dim (or those given) by central
    differences inside and one-sided differences of order edge_order (1 or 2) at the ends.
    spacing: a number, one number per dim, or one 1-D coordinate tensor per dim.

    >>> flambeau.gradient(flambeau.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    >>> flambeau.gradient(flambeau.tensor([1.0, 4.0, 9.0, 16.0]), spacing=2.0)
    (tensor([1.5000, 2.0000, 3.0000, 3.5000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}"
        )
    if dim is None:
        dims = list(builtins.range(input.dim()))
    elif isinstance(dim, builtins.int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [wrap_dim(d, input.dim()) for d in dims]
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    f = input if input.is_floating_point() or input.is_complex() else input.to(_float_dtype(input))
    return tuple(
        _gradient_along(f, h, d, edge_order) for h, d in zip(_spacings(input, spacing, dims), dims)
    )


# ---- membership -----------------------------------------------------------------------------


@_dispatch_on("elements", "test_elements", "out")
def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of elements occurs in test_elements (either may be a scalar).

    >>> flambeau.isin(flambeau.tensor([1, 2, 3, 4]), flambeau.tensor([2, 4, 6]))
    tensor([False,  True, False,  True])
    """
    del assume_unique  # the sorted search below needs no uniqueness
    if not isinstance(elements, _C.Tensor):
        elements = _C.tensor(elements, dtype=test_elements.dtype)
    if not isinstance(test_elements, _C.Tensor):
        test_elements = _C.tensor(test_elements, dtype=elements.dtype)
    dtype = _C.promote_types(elements.dtype, test_elements.dtype)
    e = elements.to(dtype)
    pool = test_elements.reshape(-1).to(dtype).sort()[0]
    if pool.numel() == 0:
        found = _C.zeros(e.shape, dtype=_C.bool)
    else:
        pos = _C.searchsorted(pool, e.contiguous()).clamp_max(pool.numel() - 1)
        found = pool.take(pos) == e
    return into_out(out, ~found if invert else found)


__all__ = [
    "cdist",
    "corrcoef",
    "cov",
    "cumulative_trapezoid",
    "dist",
    "gradient",
    "histogram",
    "histogramdd",
    "isin",
    "nanquantile",
    "pdist",
    "quantile",
    "renorm",
    "trapezoid",
    "trapz",
]


def install() -> None:
    T = _C.Tensor
    for name in ("corrcoef", "cov", "dist", "histogram", "nanquantile", "quantile", "renorm"):
        setattr(T, name, globals()[name])
    T.renorm_ = _renorm_
