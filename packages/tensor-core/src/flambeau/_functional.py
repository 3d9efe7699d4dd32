"""Functions whose PyTorch signatures take more forms than one table schema
(torch.functional's role): they normalise their arguments, then call the core."""

from __future__ import annotations

from flambeau import _C, overrides
from flambeau.overrides import _dispatch_on


def with_table_example(binding):
    """Decorator: the wrapper's docstring ends with the operator's example (declared once,
    in ops/*.yaml, and at the end of the binding's docstring)."""

    def decorate(fn):
        doc = binding.__doc__ or ""
        start = doc.find("\n>>> ")
        if start >= 0:
            fn.__doc__ = f"{(fn.__doc__ or '').rstrip()}\n\n{doc[start + 1 :]}"
        return fn

    return decorate


@_dispatch_on("a", "b")
@with_table_example(_C.tensordot)
def tensordot(a, b, dims=2, out=None):
    """Contracts dims of a with dims of b: an int n (a's last n with b's first n), a
    pair of lists ([a dims], [b dims]), or a tensor holding either."""
    if isinstance(dims, _C.Tensor):
        dims = dims.item() if dims.dim() == 0 else dims.tolist()
    kwargs = {} if out is None else {"out": out}
    if isinstance(dims, int):
        return _C.tensordot(a, b, dims, **kwargs)
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
        return _C.tensordot(a, b, dims_a, dims_b, **kwargs)
    raise RuntimeError(
        f"tensordot expects dims to be an int or a pair of lists of dims, got {dims!r}"
    )


@_dispatch_on("tensors")
def meshgrid(*tensors, indexing=None):
    """Coordinate grids (expanded views) from 1-d tensors, given as arguments or as one
    list; indexing 'ij' (the default) or 'xy'.

    >>> x, y = flambeau.meshgrid(flambeau.tensor([1, 2]), flambeau.tensor([3, 4, 5]), indexing="ij")
    >>> x
    tensor([[1, 1, 1],
            [2, 2, 2]])
    >>> y.shape
    flambeau.Size([2, 3])
    """
    return _C.meshgrid(*tensors, indexing=indexing)


@with_table_example(_C.einsum)
def einsum(*args):
    """Einstein summation, given as an equation and operands, or in PyTorch's sublist form
    einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]) where a sublist holds ints in
    [0, 52) for subscripts and ``...`` for broadcast dims.

    >>> a = flambeau.ones(2, 3)
    >>> flambeau.einsum(a, [0, 1], a, [2, 1], [0, 2])
    tensor([[3., 3.],
            [3., 3.]])
    """
    if not args:
        raise TypeError("einsum(): expected an equation and operands")
    if isinstance(args[0], str):
        if len(args) == 2 and isinstance(args[1], (list, tuple)):
            # The operands as one list: called again spread out, so that a
            # __torch_function__ handler (fx's tracer) sees einsum(eq, a, b), as in PyTorch.
            return einsum(args[0], *args[1])
        operands = args[1:]
    else:
        operands = args[0::2]  # the sublist form: the operands come before their sublists
    if overrides.has_torch_function(operands):
        return overrides.handle_torch_function(einsum, operands, *args)
    if isinstance(args[0], str):
        return _C.einsum(*args)
    pairs, output = (args[:-1], args[-1]) if len(args) % 2 else (args, None)
    equation = ",".join(_sublist(s) for s in pairs[1::2])
    if output is not None:
        equation += "->" + _sublist(output)
    return _C.einsum(equation, list(pairs[0::2]))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(sublist) -> str:
    if isinstance(sublist, (_C.Tensor, str)):
        raise TypeError(
            "einsum(): in the sublist form, each operand must be followed by a list of ints "
            f"and Ellipsis, got {type(sublist).__name__}"
        )
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and not isinstance(s, bool) and 0 <= s < len(_LETTERS):
            out.append(_LETTERS[s])
        else:
            raise ValueError(
                "einsum(): subscript in subscript list is not within the valid range [0, 52), "
                f"got {s!r}"
            )
    return "".join(out)
