"""``repr`` of sparse tensors, in PyTorch's format::

tensor(indices=tensor([[0, 1],
                       [2, 0]]),
       values=tensor([3., 4.]),
       size=(2, 3), nnz=2, layout=flambeau.sparse_coo)
"""

from __future__ import annotations

from flambeau import _C
from flambeau._printing import _default_complex, tensor_body

_INDENT = len("tensor(")


def _plain_repr(t, column: int) -> str:
    """``tensor([...])`` without dtype or autograd suffixes, continuation lines aligned
    for text starting at ``column``."""
    t = t.detach()
    if t.numel() == 0:
        return "tensor([]" + ("" if t.dim() == 1 else f", size={tuple(t.shape)}") + ")"
    return "tensor(" + tensor_body(t if t.is_cpu else t.cpu(), column + _INDENT) + ")"


def sparse_repr(s) -> str:
    parts = []
    for label, t in s._repr_parts():
        head = f"{label}="
        column = (_INDENT if parts else len("tensor(")) + len(head)
        parts.append(head + _plain_repr(t, column))
    suffixes = []
    if s.device.type != "cpu":
        suffixes.append(f"device='{s.device}'")
    suffixes.append(f"size={tuple(s.shape)}")
    suffixes.append(f"nnz={s._nnz()}")
    default = _C.get_default_dtype()
    if s.dtype not in (default, _default_complex(default), _C.int64, _C.bool):
        suffixes.append(f"dtype={s.dtype!r}")
    suffixes.append(f"layout={s.layout!r}")
    if s.grad_fn is not None:
        name = s.grad_fn.name() if hasattr(s.grad_fn, "name") else type(s.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    sep = ",\n" + " " * _INDENT
    return "tensor(" + sep.join(parts) + sep + ", ".join(suffixes) + ")"
