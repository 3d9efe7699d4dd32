"""Operations on compressed (CSR/CSC/BSR/BSC) matrices: index queries, conversions,
products and value-wise arithmetic; products and reductions go through COO."""

from __future__ import annotations

import flambeau
from flambeau.sparse._base import SparseData, register
from flambeau.sparse._compressed import BLOCKED, NAMES, OPS, SparseCompressedTensor
from flambeau.sparse._compressed_convert import to_compressed, to_coo
from flambeau.sparse._coo import SparseCooTensor, to_dense


def _index_query(name: str, attr: str):
    def query(s):
        if name not in NAMES[s._sp_layout]:
            raise RuntimeError(
                f"{name} expected sparse {'row' if name[0] == 'c' and name[1] == 'r' else 'column'}"
                f" compressed tensor layout but got {s._sp_layout._name}"
            )
        return getattr(s, attr)

    def copy(s):
        return query(s).clone()

    query.__name__, copy.__name__ = name, name + "_copy"
    return query, copy


for _name, _attr in (
    ("crow_indices", "_sp_compressed"),
    ("ccol_indices", "_sp_compressed"),
    ("col_indices", "_sp_plain"),
    ("row_indices", "_sp_plain"),
):
    _query, _copy = _index_query(_name, _attr)
    register(OPS, _name)(_query)
    register(OPS, _name + "_copy")(_copy)


@register(OPS, "values")
def values(s):
    return s._sp_values


@register(OPS, "sparse_dim")
def sparse_dim(s) -> int:
    return 2


@register(OPS, "dense_dim")
def dense_dim(s) -> int:
    return 0


@register(OPS, "to_dense")
def compressed_to_dense(s, dtype=None, *, masked_grad=None):
    return to_dense(to_coo(s), dtype)


@register(OPS, "to_sparse_coo")
def to_sparse_coo(s):
    return to_coo(s)


@register(OPS, "to_sparse")
def to_sparse(s, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is None or layout is flambeau.sparse_coo:
        if sparse_dim not in (None, 2):
            raise RuntimeError("to_sparse: a compressed matrix has sparse_dim 2")
        return to_coo(s)
    return to_compressed(s, layout, blocksize, dense_dim)


def _to_layout(name: str, blocked: bool):
    layout = getattr(flambeau, name)

    def convert(x, *args, dense_dim=None):
        blocksize = args[0] if blocked and args else None
        if not blocked and args:
            dense_dim = args[0]
        return to_compressed(x, layout, blocksize, dense_dim)

    convert.__name__ = f"to_{name}"
    return convert


TO_LAYOUT = {
    f"to_{n}": _to_layout(n, b)
    for n, b in (
        ("sparse_csr", False),
        ("sparse_csc", False),
        ("sparse_bsr", True),
        ("sparse_bsc", True),
    )
}
OPS.update(TO_LAYOUT)


def _operand(x):
    return to_coo(x) if isinstance(x, SparseCompressedTensor) else x


@register(OPS, "mm", "spmm", "matmul", "__matmul__")
def mm(a, b):
    """Products through COO; a compressed @ compressed product comes back as the left
    operand's layout (CSR/CSC), as PyTorch's does."""
    out = flambeau.matmul(_operand(a), _operand(b))
    if isinstance(out, SparseCooTensor) and isinstance(a, SparseCompressedTensor):
        layout = a._sp_layout if a._sp_layout not in BLOCKED else flambeau.sparse_csr
        return to_compressed(out, layout)
    return out


@register(OPS, "__rmatmul__")
def rmatmul(s, other):
    return mm(other, s)


@register(OPS, "addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return flambeau.addmm(_operand(input), _operand(mat1), _operand(mat2), beta=beta, alpha=alpha)


def mm_reduce(mat1, mat2, reduce: str):
    """torch.sparse.mm with reduce: each output row reduces the products of row i's
    stored elements (sum, mean, amax or amin); rows without elements are 0."""
    if not (isinstance(mat1, SparseCompressedTensor) and mat1.layout is flambeau.sparse_csr):
        raise RuntimeError("torch.sparse.mm: reduce is supported for a CSR mat1 only")
    if isinstance(mat2, SparseData):
        raise RuntimeError("torch.sparse.mm: reduce needs a dense mat2")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce == "prod":
        raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
    if reduce not in ("sum", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    coo = to_coo(mat1)
    rows, cols = coo._sp_indices
    products = coo._sp_values.unsqueeze(1) * mat2[cols]
    out = flambeau.zeros((mat1.shape[0], mat2.shape[1]), dtype=products.dtype)
    if reduce in ("sum", "mean"):
        out = out.index_add(0, rows, products)
        if reduce == "mean":
            count = flambeau.bincount(rows, minlength=mat1.shape[0]).clamp(min=1)
            out = out / count.unsqueeze(1).to(out.dtype)
        return out
    return out.index_reduce(0, rows, products, reduce, include_self=False)


@register(OPS, "transpose", "swapaxes", "swapdims")
def transpose(s, dim0, dim1):
    """CSR <-> CSC (and BSR <-> BSC) over the same arrays, as PyTorch does."""
    d0, d1 = dim0 % 2, dim1 % 2
    if d0 == d1:
        return s
    flipped = {
        flambeau.sparse_csr: flambeau.sparse_csc,
        flambeau.sparse_csc: flambeau.sparse_csr,
        flambeau.sparse_bsr: flambeau.sparse_bsc,
        flambeau.sparse_bsc: flambeau.sparse_bsr,
    }[s._sp_layout]
    values = s._sp_values.transpose(1, 2) if s._sp_layout in BLOCKED else s._sp_values
    return s._replace(shape=(s.shape[1], s.shape[0]), _sp_layout=flipped, _sp_values=values)


@register(OPS, "t")
def t(s):
    return transpose(s, 0, 1)


@register(OPS, "sum")
def sum_(s, dim=None, keepdim=False, *, dtype=None):
    if dim is None:
        return s._sp_values.sum(dtype=dtype)
    return to_coo(s).sum(dim, keepdim, dtype=dtype)


def _value_op(name: str, fn):
    def op(s, *args, **kwargs):
        if not isinstance(s, SparseData):  # dense * csr reaches here as mul(dense, csr)
            s, args = args[0], (s, *args[1:])
        for a in args:
            if isinstance(a, flambeau.Tensor) and (isinstance(a, SparseData) or a.dim()):
                raise RuntimeError(f"{name}: a compressed sparse tensor combines with scalars only")
        return s._replace(_sp_values=fn(s._sp_values, *args, **kwargs))

    op.__name__ = name
    return op


for _names, _fn in (
    (("neg", "negative", "__neg__"), flambeau.neg),
    (("abs", "__abs__"), flambeau.abs),
    (("mul", "__mul__", "__rmul__"), flambeau.mul),
    (("div", "__truediv__"), flambeau.div),
):
    register(OPS, *_names)(_value_op(_names[0], _fn))
