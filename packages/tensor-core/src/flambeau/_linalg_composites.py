"""The torch.linalg functions written in Python over the core's operators (and so
differentiable through them): cond, diagonal, matrix_exp, multi_dot, tensorinv,
tensorsolve, vander and vecdot. flambeau.linalg re-exports them; torch.matrix_exp is
matrix_exp itself."""

from __future__ import annotations

import builtins
import math

from flambeau import _C
from flambeau._arg_checks import check_tensor, dtype_name, int_argument, torch_type_name
from flambeau._out import into_out
from flambeau.overrides import _dispatch_on


def check_square(name, A):
    """PyTorch's errors for an input that is not a batch of square matrices."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )


def _check_float(name, t):
    if not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. "
            f"Got {torch_type_name(t.dtype)}"
        )


def _real_zeros(A, shape):
    return _C.zeros(shape, dtype=A.real.dtype)


# ---- cond -----------------------------------------------------------------------------------

_SVD_ORDS = (None, 2, -2)
_NORM_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def _ord_text(p):
    """p as PyTorch prints a norm order: 3.0 as 3, inf as inf."""
    if isinstance(p, float) and p.is_integer():
        return str(int(p))
    return str(p)


@_dispatch_on("input", "out", name="linalg_cond")
def cond(input, p=None, *, out=None):
    """The condition number of each matrix in norm p: ||A||_p ||A^-1||_p, or, for p in
    (None, 2, -2), the ratio of its largest and smallest singular values (any shape, then).

    >>> flambeau.linalg.cond(flambeau.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(4.)
    >>> flambeau.linalg.cond(flambeau.tensor([[1.0, 1.0], [0.0, 1.0]]), p=1)
    tensor(4.)
    """
    check_tensor("linalg_cond", "input", 1, input)
    A = input
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, bool):
        p = int(p)
    if p not in _SVD_ORDS and p not in _NORM_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_text(p)}")
    batch = tuple(A.shape[:-2])
    if p in _SVD_ORDS:
        _check_float("linalg.svd", A)
        if A.numel() == 0:
            return into_out(out, _real_zeros(A, batch))
        s = _C.linalg_svdvals(A)  # descending
        largest, smallest = s[..., 0], s[..., -1]
        res = smallest / largest if p == -2 else largest / smallest
        return into_out(out, res)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={_ord_text(p)}): A must be batches of square matrices, but they "
            f"are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    _check_float("linalg.inv", A)
    if A.numel() == 0:
        return into_out(out, _real_zeros(A, batch))
    inverse, info = _C.linalg_inv_ex(A)
    res = _C.linalg_matrix_norm(A, p) * _C.linalg_matrix_norm(inverse, p)
    # A singular matrix (LAPACK's info > 0) has an infinite condition number.
    return into_out(out, _C.where(info > 0, math.inf, res))


# ---- shape helpers --------------------------------------------------------------------------


@_dispatch_on("A", name="linalg_diagonal")
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix over dims dim1 and dim2 (a view), as torch.diagonal with
    the last two dims by default.

    >>> A = flambeau.arange(9.0).reshape(3, 3)
    >>> flambeau.linalg.diagonal(A)
    tensor([0., 4., 8.])
    >>> flambeau.linalg.diagonal(A, offset=1)
    tensor([1., 5.])
    """
    check_tensor("linalg_diagonal", "A", 1, A)
    return _C.diagonal(A, offset, dim1, dim2)


@_dispatch_on("x", "y", "out", name="linalg_vecdot")
def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) over dim, x and y broadcast together.

    >>> x = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> flambeau.linalg.vecdot(x, flambeau.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    check_tensor("linalg_vecdot", "x", 1, x)
    check_tensor("linalg_vecdot", "y", 2, y)
    _check_float("linalg.vecdot", x)
    if x.dtype != y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{torch_type_name(x.dtype)} and y of type {torch_type_name(y.dtype)} instead"
        )
    return into_out(out, (x.conj() * y).sum(dim))


@_dispatch_on("x", name="linalg_vander")
def vander(x, *, N=None):
    """The Vandermonde matrix of each vector x (..., n): (..., n, N) with columns
    x**0, x**1, ..., x**(N-1) (increasing powers, unlike torch.vander); N defaults to n.

    >>> flambeau.linalg.vander(flambeau.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    check_tensor("linalg_vander", "x", 1, x)
    if x.dtype in (_C.bool, _C.float16, _C.bfloat16):
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{torch_type_name(x.dtype)}"
        )
    if x.dim() == 0:
        x = x.reshape(1)
    if N is None:
        N = x.shape[-1]
    elif isinstance(N, bool) or not isinstance(N, int):
        raise TypeError(f"linalg_vander(): argument 'N' must be int, not {type(N).__name__}")
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_C.int64)
    return powers(x, N)


def powers(x, N):
    """(..., n, N): x**0, ..., x**(N-1) of each element of x (..., n), by a cumulative
    product, so the gradient at x = 0 is exact (pow's is not)."""
    ones = _C.ones(tuple(x.shape) + (1,), dtype=x.dtype)
    if N == 1:
        return ones
    rest = x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,)).cumprod(-1)
    return _C.cat([ones, rest], -1)


# ---- matrix_exp -----------------------------------------------------------------------------


@_dispatch_on("input")
def matrix_exp(input):
    """exp(A) of each square matrix: Taylor series of A / 2**s (norm <= 1/2), squared s times.

    >>> flambeau.matrix_exp(flambeau.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    >>> flambeau.matrix_exp(flambeau.tensor([[1.0, 0.0], [0.0, 2.0]]))
    tensor([[2.7183, 0.0000],
            [0.0000, 7.3891]])
    """
    check_tensor("linalg_matrix_exp", "input", 1, input)
    A = input
    check_square("linalg.matrix_exp", A)
    _check_float("linalg.matrix_exp", A)
    if A.numel() == 0:
        return A.clone()
    # The largest column 1-norm of each matrix; non-finite matrices come out NaN by
    # themselves and do not set the scaling of the others.
    norms = A.detach().abs().sum(-2).amax(-1).reshape(-1).tolist()
    norm = builtins.max((v for v in norms if math.isfinite(v)), default=0.0)
    s = builtins.max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    X = A / (2.0**s)
    eye = _C.eye(A.shape[-1], dtype=A.dtype).expand(A.shape)
    # ||X|| <= 1/2: the terms after X^18/18! are below 2^-19 / 19!, far under float64's eps.
    result, term = eye, eye
    for k in builtins.range(1, 19):
        term = _C.matmul(term, X) / k
        result = result + term
    for _ in builtins.range(s):
        result = _C.matmul(result, result)
    return result


# ---- multi_dot ------------------------------------------------------------------------------


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j (dims[i] x dims[i+1], ...)
    splits, by the classic dynamic programme over multiply-add counts."""
    n = len(dims) - 1
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _C.mm(_multiply(mats, split, i, k), _multiply(mats, split, k + 1, j))


@_dispatch_on("*tensors", "out", name="linalg_multi_dot")
def multi_dot(tensors, *, out=None):
    """The product of two or more matrices in the order that needs the fewest
    multiplications; the first may be a row vector and the last a column vector (1-D).

    >>> a, b, c = flambeau.ones(2, 3), flambeau.ones(3, 4), flambeau.ones(4, 1)
    >>> flambeau.linalg.multi_dot([a, b, c])
    tensor([[12.],
            [12.]])
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            "linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in builtins.range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in builtins.range(1, n):
        if tensors[i].dtype != first.dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{dtype_name(first.dtype)} and tensor {i} {dtype_name(tensors[i].dtype)}"
            )
    # A 1-D first (last) tensor is a row (column) matrix, dropped from the result.
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(1)
    for i in builtins.range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    res = _multiply(mats, _chain_order(dims), 0, n - 1)
    if first.dim() == 1:
        res = res.squeeze(0)
    if last.dim() == 1:
        res = res.squeeze(-1)
    return into_out(out, res)


# ---- tensorinv, tensorsolve -----------------------------------------------------------------


@_dispatch_on("input", "out", name="linalg_tensorinv")
def tensorinv(input, ind=2, *, out=None):
    """The inverse of input under tensordot over its first ind dims: shaped
    input.shape[ind:] + input.shape[:ind].

    >>> A = 2 * flambeau.eye(4).reshape(2, 2, 4)
    >>> Ainv = flambeau.linalg.tensorinv(A, ind=2)
    >>> Ainv.shape
    flambeau.Size([4, 2, 2])
    >>> flambeau.allclose(flambeau.tensordot(A, Ainv, 1), flambeau.eye(4).reshape(2, 2, 2, 2))
    True
    """
    check_tensor("linalg_tensorinv", "input", 1, input)
    ind = int_argument("linalg_tensorinv", "ind", 2, ind)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > input.dim():
        raise RuntimeError(
            f"Expected 'ind' to be at most input.dim() = {input.dim()}, but got {ind}"
        )
    before, after = tuple(input.shape[:ind]), tuple(input.shape[ind:])
    if math.prod(before) != math.prod(after):
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {math.prod(after)} != {math.prod(before)}"
        )
    inverse = _C.linalg_inv(input.reshape(math.prod(before), math.prod(after)))
    return into_out(out, inverse.reshape(after + before))


@_dispatch_on("input", "other", "out", name="linalg_tensorsolve")
def tensorsolve(input, other, dims=None, *, out=None):
    """X with tensordot(input, X, X.dim()) = other: input's dims listed in dims moved last
    first; X is shaped input.shape[other.dim():].

    >>> A = flambeau.eye(6).reshape(2, 3, 6) * 2
    >>> B = flambeau.ones(2, 3)
    >>> X = flambeau.linalg.tensorsolve(A, B)
    >>> X.shape, flambeau.allclose(flambeau.tensordot(A, X, 1), B)
    (flambeau.Size([6]), True)
    """
    check_tensor("linalg_tensorsolve", "input", 1, input)
    check_tensor("linalg_tensorsolve", "other", 2, other)
    A = input
    if dims is not None:
        if not isinstance(dims, (list, tuple)) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in dims
        ):
            raise TypeError(
                "linalg_tensorsolve(): argument 'dims' must be tuple of ints, not "
                f"{type(dims).__name__}"
            )
        ndim = A.dim()
        A = A.movedim(list(dims), list(builtins.range(ndim - len(dims), ndim)))
    result_shape = tuple(A.shape[other.dim() :])
    if math.prod(result_shape) != other.numel():
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {math.prod(result_shape)} != {other.numel()}"
        )
    X = _C.linalg_solve(A.reshape(other.numel(), math.prod(result_shape)), other.reshape(-1))
    return into_out(out, X.reshape(result_shape))


__all__ = [
    "cond",
    "diagonal",
    "matrix_exp",
    "multi_dot",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
]
