"""flambeau.sparse: sparse tensors (PyTorch's ``torch.sparse``).

Sparse tensors are made by ``flambeau.sparse_coo_tensor`` (and the compressed
constructors) or ``Tensor.to_sparse*``; this module holds the functions PyTorch puts
in ``torch.sparse``. How sparse tensors are built is in docs/design/sparse.rst.

PyTorch's semi-structured (2:4) formats, ``SparseSemiStructuredTensor*`` and
``to_sparse_semi_structured`` (``flambeau.sparse.semi_structured``), run on the CPU
with dense ops on the compressed form.
"""

from __future__ import annotations

import builtins

import flambeau
from flambeau.sparse import (  # noqa: F401  # noqa: F401
    _common_ops,
    _compressed,
    _compressed_ops,
    _coo,
    _coo_linalg,
    _coo_ops,
    _coo_shape,
    _semi_structured_ops,
)
from flambeau.sparse._base import SparseData, seal
from flambeau.sparse._compressed import SparseCompressedTensor
from flambeau.sparse._coo import SparseCooTensor, make_coo
from flambeau.sparse._invariants import check_sparse_tensor_invariants
from flambeau.sparse._legacy_types import LEGACY_SPARSE_TYPES
from flambeau.sparse.semi_structured import (
    SparseSemiStructuredTensor,
    SparseSemiStructuredTensorCUSPARSELT,
    SparseSemiStructuredTensorCUTLASS,
    to_sparse_semi_structured,
)

_coo.OPS.update(_compressed_ops.TO_LAYOUT)
seal(SparseCooTensor)
seal(SparseCompressedTensor)
seal(SparseSemiStructuredTensor)
seal(SparseSemiStructuredTensorCUTLASS)
seal(SparseSemiStructuredTensorCUSPARSELT)
globals().update(LEGACY_SPARSE_TYPES)

__all__ = [
    "SparseSemiStructuredTensor",
    "SparseSemiStructuredTensorCUSPARSELT",
    "SparseSemiStructuredTensorCUTLASS",
    "addmm",
    "as_sparse_gradcheck",
    "check_sparse_tensor_invariants",
    "log_softmax",
    "mm",
    "sampled_addmm",
    "softmax",
    "spdiags",
    "spsolve",
    "sum",
    "to_sparse_semi_structured",
]


def _require_sparse(x, op: str) -> None:
    if not isinstance(x, SparseData):
        raise RuntimeError(f"{op}: expected a sparse tensor, got a strided one")


def mm(mat1, mat2, reduce=None):
    """Matrix product of a sparse matrix with a sparse or dense one (sparse @ sparse is
    sparse). Gradients of a sparse operand keep its sparsity pattern. ``reduce``
    ("sum", "mean", "amax", "amin") is for a CSR mat1 and a dense mat2.

    >>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> flambeau.sparse.mm(s, flambeau.ones(3, 2))
    tensor([[3., 3.],
            [9., 9.]])
    """
    _require_sparse(mat1, "torch.sparse.mm")
    if reduce is None:
        return flambeau.mm(mat1, mat2)
    from flambeau.sparse._compressed_ops import mm_reduce

    return mm_reduce(mat1, mat2, reduce)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) for a sparse mat1 and a dense mat and mat2.

    >>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> flambeau.sparse.addmm(flambeau.ones(2, 2), s, flambeau.ones(3, 2), alpha=2.0)
    tensor([[ 7.,  7.],
            [19., 19.]])
    """
    _require_sparse(mat1, "torch.sparse.addmm")
    return flambeau.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of a sparse tensor over dim (all dims when None): dense when every sparse dim
    is summed, else sparse.

    >>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> flambeau.sparse.sum(s)
    tensor(12.)
    >>> flambeau.sparse.sum(s, dim=1).to_dense()
    tensor([3., 9.])
    """
    _require_sparse(input, "torch.sparse.sum")
    return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """Softmax over the stored elements along dim; unstored elements count as -inf and
    stay unstored.

    >>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> flambeau.sparse.softmax(s, dim=1).to_dense()
    tensor([[0.0000, 0.0000, 1.0000],
            [0.2689, 0.0000, 0.7311]])
    """
    _require_sparse(input, "torch.sparse.softmax")
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log of ``softmax``, over the stored elements along dim.

    >>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> flambeau.sparse.log_softmax(s, dim=1).to_dense()
    tensor([[ 0.0000,  0.0000,  0.0000],
            [-1.3133,  0.0000, -0.3133]])
    """
    _require_sparse(input, "torch.sparse.log_softmax")
    return input.log_softmax(dim, dtype=dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) computed only at input's stored elements (a
    CSR input, as PyTorch; COO too), the result in input's layout.

    >>> input = flambeau.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse_csr()
    >>> mat1 = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> out = flambeau.sparse.sampled_addmm(input, mat1, flambeau.eye(2))
    >>> out.layout, out.to_dense()
    (flambeau.sparse_csr, tensor([[2., 0.],
            [0., 6.]]))
    """
    _require_sparse(input, "torch.sparse.sampled_addmm")
    if mat1.dim() != 2 or mat2.dim() != 2 or mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
            f"({'x'.join(map(str, mat1.shape))} and {'x'.join(map(str, mat2.shape))})"
        )
    if tuple(input.shape) != (mat1.shape[0], mat2.shape[1]):
        raise RuntimeError(
            f"sampled_addmm: input of shape {list(input.shape)} does not match the product "
            f"({mat1.shape[0]}x{mat2.shape[1]})"
        )
    coo = input.to_sparse_coo().coalesce()
    rows, cols = coo._sp_indices
    sampled = (mat1[rows] * mat2.t()[cols]).sum(-1)
    result = make_coo(coo._sp_indices, coo._sp_values * beta + sampled * alpha, coo.shape, True)
    result = (
        result if input.layout is flambeau.sparse_coo else result.to_sparse(layout=input.layout)
    )
    if out is not None:
        out.__dict__.update(result.__dict__)
        return out
    return result


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of the given shape from rows of diagonals: ``diagonals[i, j]`` is
    stored at ``(j - offsets[i], j)`` where that lies inside (SciPy's convention).

    >>> diagonals = flambeau.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> flambeau.sparse.spdiags(diagonals, flambeau.tensor([0, -1]), (3, 3)).to_dense()
    tensor([[1., 0., 0.],
            [4., 2., 0.],
            [0., 5., 3.]])
    """
    if diagonals.dim() == 1:
        diagonals = diagonals.unsqueeze(0)
    offsets = (
        offsets.reshape(-1)
        if isinstance(offsets, flambeau.Tensor)
        else flambeau.tensor(offsets).reshape(-1)
    )
    if diagonals.dim() != 2 or diagonals.shape[0] != offsets.shape[0]:
        raise ValueError(
            f"Number of diagonals ({diagonals.shape[0] if diagonals.dim() else 0}) does not "
            f"match the number of offsets ({offsets.shape[0]})"
        )
    if len(shape) != 2:
        raise ValueError(f"Output shape must be 2d, but got {len(shape)}d")
    if len(set(offsets.tolist())) != offsets.shape[0]:
        raise ValueError("Offset tensor contains duplicate values")
    rows_n, cols_n = shape
    width = builtins.min(cols_n, diagonals.shape[1])
    cols = flambeau.arange(width).unsqueeze(0).expand(offsets.shape[0], width)
    rows = cols - offsets.unsqueeze(1)
    inside = (rows >= 0) & (rows < rows_n)
    values = diagonals[:, :width][inside]
    indices = flambeau.stack([rows[inside], cols[inside]])
    result = flambeau.sparse_coo_tensor(indices, values, (rows_n, cols_n)).coalesce()
    if layout is None or layout is flambeau.sparse_coo:
        return result
    if layout not in (flambeau.sparse_csr, flambeau.sparse_csc):
        raise ValueError("Only COO (default), CSR or CSC layouts are supported")
    return result.to_sparse(layout=layout)


def spsolve(input, other, *, left=True):
    """The solution X of input @ X = other (X @ input = other when left is False) for a
    sparse square input, solved densely.

    >>> A = flambeau.tensor([[2.0, 0.0], [0.0, 4.0]]).to_sparse()
    >>> flambeau.sparse.spsolve(A, flambeau.tensor([2.0, 8.0]))
    tensor([1., 2.])
    """
    _require_sparse(input, "torch.sparse.spsolve")
    return flambeau.linalg.solve(input.to_dense(), other, left=left)


def as_sparse_gradcheck(gradcheck):
    """gradcheck (or gradgradcheck) extended to functions of sparse tensors: a sparse input
    requiring grad is checked through its values, sparse outputs through their dense form.

    >>> gradcheck = flambeau.sparse.as_sparse_gradcheck(flambeau.autograd.gradcheck)
    >>> x = flambeau.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=flambeau.float64).to_sparse()
    >>> gradcheck(lambda t: (t * 3).to_dense(), (x.requires_grad_(),))
    True
    """

    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        inputs = (inputs,) if isinstance(inputs, flambeau.Tensor) else tuple(inputs)
        templates = [
            x.detach() if isinstance(x, SparseData) and x.requires_grad else None for x in inputs
        ]
        flat = [
            x if t is None else x._sp_values.detach().requires_grad_(True)
            for x, t in zip(inputs, templates)
        ]

        def dense_func(*args):
            real = [a if t is None else t._replace(_sp_values=a) for a, t in zip(args, templates)]
            out = func(*real)
            if isinstance(out, (tuple, list)):
                return type(out)(o.to_dense() if isinstance(o, SparseData) else o for o in out)
            return out.to_dense() if isinstance(out, SparseData) else out

        return gradcheck(dense_func, tuple(flat), **kwargs)

    gradcheck_with_sparse_support.__name__ = getattr(gradcheck, "__name__", "gradcheck")
    return gradcheck_with_sparse_support
