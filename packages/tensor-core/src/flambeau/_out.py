"""PyTorch's out= for functions the Python face composes from core operators."""

from __future__ import annotations

from flambeau import _C


def into_out(out, result):
    """result written into out (resized, or cast by PyTorch's rule, as the core's own out=
    arguments are) and out returned; result itself when out is None."""
    if out is None:
        return result
    # x * True is x exactly, in every dtype (NaN, -0.0 and bool kept): the multiplication
    # is there only for the core's out= handling, its autograd check included.
    return _C.mul(result, True, out=out)
