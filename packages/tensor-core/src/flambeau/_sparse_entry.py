"""The top-level names of sparse tensors (``flambeau.sparse_coo_tensor``, ``smm``, ...)
and the dense Tensor methods that make sparse tensors (``to_sparse``, ``sparse_mask``).

They load flambeau.sparse on first call, so that ``import flambeau`` stays cheap.
"""

from __future__ import annotations

from flambeau import _C
from flambeau._dtype_aliases import sparse_coo
from flambeau.overrides import _dispatch_on

__all__ = [
    "sparse_coo_tensor",
    "sparse_compressed_tensor",
    "sparse_csr_tensor",
    "sparse_csc_tensor",
    "sparse_bsr_tensor",
    "sparse_bsc_tensor",
    "spmm",
    "dsmm",
    "smm",
    "hspmm",
    "hsmm",
    "sspaddmm",
    "indices_copy",
    "values_copy",
    "crow_indices_copy",
    "col_indices_copy",
    "ccol_indices_copy",
    "row_indices_copy",
]
# The names above that PyTorch has as functions only, never as Tensor methods.
FUNCTIONS_ONLY = frozenset({"spmm", "dsmm", "hsmm"} | {n for n in __all__ if n.endswith("_copy")})


def _sparse():
    import flambeau.sparse  # noqa: F401 - loads and seals the sparse classes

    return flambeau.sparse


def _constructor(name: str, module: str, doc: str, example: str):
    def construct(*args, **kwargs):
        _sparse()
        import importlib

        return getattr(importlib.import_module(f"flambeau.sparse.{module}"), name)(*args, **kwargs)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"{doc}\n\n{example}"
    return construct


sparse_coo_tensor = _constructor(
    "sparse_coo_tensor",
    "_construct",
    "A sparse COO tensor from indices (sparse_dim x nnz) and values (nnz x dense dims).",
    """\
>>> i = flambeau.tensor([[0, 1, 1], [2, 0, 2]])
>>> s = flambeau.sparse_coo_tensor(i, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
""",
)
sparse_compressed_tensor = _constructor(
    "sparse_compressed_tensor",
    "_compressed_convert",
    "A CSR, CSC, BSR or BSC matrix (layout=...) from compressed indices, plain indices, values.",
    """\
>>> crow, col = flambeau.tensor([0, 1, 3]), flambeau.tensor([2, 0, 2])
>>> values, csr = flambeau.tensor([3.0, 4.0, 5.0]), flambeau.sparse_csr
>>> s = flambeau.sparse_compressed_tensor(crow, col, values, (2, 3), layout=csr)
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
""",
)
sparse_csr_tensor = _constructor(
    "sparse_csr_tensor",
    "_compressed_convert",
    "A CSR matrix from crow_indices, col_indices, values.",
    """\
>>> crow, col = flambeau.tensor([0, 1, 3]), flambeau.tensor([2, 0, 2])
>>> s = flambeau.sparse_csr_tensor(crow, col, flambeau.tensor([3.0, 4.0, 5.0]), (2, 3))
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
""",
)
sparse_csc_tensor = _constructor(
    "sparse_csc_tensor",
    "_compressed_convert",
    "A CSC matrix from ccol_indices, row_indices, values.",
    """\
>>> ccol, row = flambeau.tensor([0, 1, 1, 3]), flambeau.tensor([1, 0, 1])
>>> s = flambeau.sparse_csc_tensor(ccol, row, flambeau.tensor([4.0, 3.0, 5.0]), (2, 3))
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
""",
)
sparse_bsr_tensor = _constructor(
    "sparse_bsr_tensor",
    "_compressed_convert",
    "A BSR matrix from crow_indices, col_indices, blocks.",
    """\
>>> crow, col = flambeau.tensor([0, 1, 2]), flambeau.tensor([1, 0])
>>> blocks = flambeau.tensor([[[1.0, 2.0]], [[3.0, 4.0]]])
>>> flambeau.sparse_bsr_tensor(crow, col, blocks, (2, 4)).to_dense()
tensor([[0., 0., 1., 2.],
        [3., 4., 0., 0.]])
""",
)
sparse_bsc_tensor = _constructor(
    "sparse_bsc_tensor",
    "_compressed_convert",
    "A BSC matrix from ccol_indices, row_indices, blocks.",
    """\
>>> ccol, row = flambeau.tensor([0, 1, 2]), flambeau.tensor([1, 0])
>>> blocks = flambeau.tensor([[[1.0], [2.0]], [[3.0], [4.0]]])
>>> flambeau.sparse_bsc_tensor(ccol, row, blocks, (4, 2)).to_dense()
tensor([[0., 3.],
        [0., 4.],
        [1., 0.],
        [2., 0.]])
""",
)


def _sparse_only(name: str, doc: str, example: str):
    """A function PyTorch defines for sparse arguments only."""

    def call(*args, **kwargs):
        _sparse()
        from flambeau.sparse._base import call_sparse

        return call_sparse(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{doc}\n\n{example}"
    return call


smm = _sparse_only(
    "smm",
    "sparse @ dense as a sparse COO tensor (every element of the used rows).",
    """\
>>> a = flambeau.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
>>> out = flambeau.smm(a, flambeau.tensor([[1.0, 1.0], [3.0, 4.0]]))
>>> out.layout
flambeau.sparse_coo
>>> out.to_dense()
tensor([[6., 8.],
        [0., 0.]])
""",
)
hspmm = _sparse_only(
    "hspmm",
    "sparse @ dense as a hybrid COO tensor (sparse rows, dense row values).",
    """\
>>> a = flambeau.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
>>> out = flambeau.hspmm(a, flambeau.tensor([[1.0, 1.0], [3.0, 4.0]]))
>>> out.indices(), out.values()
(tensor([[0]]), tensor([[6., 8.]]))
""",
)
sspaddmm = _sparse_only(
    "sspaddmm",
    "beta * sparse input + alpha * (sparse mat1 @ dense mat2), sparse.",
    """\
>>> x = flambeau.tensor([[1.0, 0.0], [0.0, 0.0]]).to_sparse()
>>> m1 = flambeau.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
>>> out = flambeau.sspaddmm(x, m1, flambeau.tensor([[1.0, 1.0], [3.0, 4.0]]))
>>> out.to_dense()
tensor([[7., 8.],
        [0., 0.]])
""",
)
indices_copy = _sparse_only(
    "indices_copy",
    "A copy of a coalesced COO tensor's indices().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
>>> flambeau.indices_copy(s)
tensor([[0, 1],
        [1, 0]])
""",
)
values_copy = _sparse_only(
    "values_copy",
    "A copy of a sparse tensor's values().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
>>> flambeau.values_copy(s)
tensor([2., 3.])
""",
)
crow_indices_copy = _sparse_only(
    "crow_indices_copy",
    "A copy of a CSR/BSR tensor's crow_indices().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 4.0]]).to_sparse_csr()
>>> flambeau.crow_indices_copy(s)
tensor([0, 1, 3])
""",
)
col_indices_copy = _sparse_only(
    "col_indices_copy",
    "A copy of a CSR/BSR tensor's col_indices().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 4.0]]).to_sparse_csr()
>>> flambeau.col_indices_copy(s)
tensor([1, 0, 1])
""",
)
ccol_indices_copy = _sparse_only(
    "ccol_indices_copy",
    "A copy of a CSC/BSC tensor's ccol_indices().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 4.0]]).to_sparse_csc()
>>> flambeau.ccol_indices_copy(s)
tensor([0, 1, 3])
""",
)
row_indices_copy = _sparse_only(
    "row_indices_copy",
    "A copy of a CSC/BSC tensor's row_indices().",
    """\
>>> s = flambeau.tensor([[0.0, 2.0], [3.0, 4.0]]).to_sparse_csc()
>>> flambeau.row_indices_copy(s)
tensor([1, 0, 1])
""",
)


@_dispatch_on("input", "mat2")
def spmm(input, mat2):
    """Matrix product (``mm``) of a sparse or dense matrix with a dense one.

    >>> a = flambeau.tensor([[0.0, 2.0], [1.0, 0.0]]).to_sparse()
    >>> flambeau.spmm(a, flambeau.tensor([[1.0, 1.0], [3.0, 4.0]]))
    tensor([[6., 8.],
            [1., 1.]])
    """
    return _C.mm(input, mat2)


@_dispatch_on("input", "mat2")
def dsmm(input, mat2):
    """PyTorch's older name of ``spmm``: sparse (or dense) @ dense, dense.

    >>> a = flambeau.tensor([[0.0, 2.0], [1.0, 0.0]]).to_sparse()
    >>> flambeau.dsmm(a, flambeau.eye(2))
    tensor([[0., 2.],
            [1., 0.]])
    """
    return _C.mm(input, mat2)


def hsmm(mat1, mat2):
    """PyTorch's older name of ``hspmm``: sparse @ dense as a hybrid COO tensor.

    >>> a = flambeau.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
    >>> flambeau.hsmm(a, flambeau.eye(2)).values()
    tensor([[0., 2.]])
    """
    return hspmm(mat1, mat2)


# Dense Tensor methods.


def _to_sparse(
    self,
    sparseDims=None,  # noqa: N803
    *,
    layout=None,
    blocksize=None,
    dense_dim=None,
    sparse_dim=None,
):
    """self as a sparse tensor: COO (with sparseDims sparse dims, all by default; also
    spelled sparse_dim, as PyTorch's binding names it) or the compressed layout given."""
    if sparse_dim is not None:
        if sparseDims is not None:
            raise TypeError("to_sparse(): got both sparseDims and sparse_dim")
        sparseDims = sparse_dim  # noqa: N806
    _sparse()
    from flambeau.sparse._construct import dense_to_coo

    if layout is None or layout is sparse_coo:
        return dense_to_coo(self, sparseDims)
    if sparseDims is not None:
        raise RuntimeError("to_sparse: sparse_dim is for the COO layout only")
    from flambeau.sparse._compressed_convert import to_compressed

    return to_compressed(self, layout, blocksize, dense_dim)


def _to_sparse_coo(self):
    """self as a sparse COO tensor."""
    return _to_sparse(self)


def _to_compressed_method(name: str, blocked: bool):
    def convert(self, *args, **kwargs):
        _sparse()
        from flambeau.sparse._compressed_ops import TO_LAYOUT

        return TO_LAYOUT[name](self, *args, **kwargs)

    convert.__name__ = name
    layout = name.removeprefix("to_sparse_").upper()
    convert.__doc__ = f"self as a sparse {layout} matrix" + (
        " of the given blocksize." if blocked else "."
    )
    return convert


def _sparse_mask(self, mask):
    """self's elements at the sparse COO tensor mask's indices, with mask's pattern."""
    _sparse()
    from flambeau.sparse._coo_shape import sparse_mask

    return sparse_mask(self, mask)


# What a dense tensor answers to the sparse tensors' queries (PyTorch's errors).
_SPARSE_QUERIES = {
    "indices": "sparse coordinate",
    "coalesce": "sparse coordinate",
    "values": "sparse",
    "crow_indices": "sparse row compressed",
    "col_indices": "sparse row compressed",
    "ccol_indices": "sparse column compressed",
    "row_indices": "sparse column compressed",
}


def _dense_query(name: str, layout: str):
    def query(self):
        raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided")

    query.__name__ = name
    query.__doc__ = f"The {name} of a sparse tensor; a strided tensor has none (RuntimeError)."
    return query


def install() -> None:
    T = _C.Tensor
    T.to_sparse = _to_sparse
    T.to_sparse_coo = _to_sparse_coo
    T.sparse_mask = _sparse_mask
    for name, blocked in (
        ("to_sparse_csr", False),
        ("to_sparse_csc", False),
        ("to_sparse_bsr", True),
        ("to_sparse_bsc", True),
    ):
        setattr(T, name, _to_compressed_method(name, blocked))
    for name, layout in _SPARSE_QUERIES.items():
        setattr(T, name, _dense_query(name, layout))
    for name in ("smm", "hspmm", "sspaddmm"):
        setattr(T, name, globals()[name])
