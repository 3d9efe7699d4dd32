"""``flambeau.cuda.nvtx``: NVIDIA Tools Extension ranges, as ``torch.cuda.nvtx``.

No flambeau build links NVTX (the CUDA plugin does not ship it), so every call raises
the RuntimeError PyTorch raises where NVTX is not installed. For ranges that show up in
a trace, use :func:`flambeau.profiler.record_function`.
"""

from __future__ import annotations

import contextlib

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]


def _unavailable(*args, **kwargs):
    raise RuntimeError(
        "NVTX functions not installed: flambeau has no NVTX build; use "
        "flambeau.profiler.record_function for named ranges"
    )


range_push = range_pop = range_start = range_end = mark = _unavailable


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - torch.cuda.nvtx.range
    """A context around ``range_push``/``range_pop``; raises without NVTX."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
