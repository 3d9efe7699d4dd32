"""How worker processes start: the multiprocessing context, what forked workers inherit
and the forkserver's preload."""

from __future__ import annotations

import sys

import flambeau.multiprocessing as _mp


def context_of(ctx):
    """flambeau.multiprocessing's context for a start method or context (None: the
    default): its Pipes carry shared-memory descriptors."""
    if ctx is None:
        return _mp.get_context()
    if isinstance(ctx, str):
        return _mp.get_context(ctx)
    if isinstance(ctx, _mp.context._TensorChannels):
        return ctx
    return _mp.get_context(ctx.get_start_method())


def import_for_workers(ctx) -> None:
    """Imports in this process what every worker imports, where workers are forked from
    it: a worker seeds NumPy's generator when the program has NumPy, and importing
    numpy.random (a dozen extension modules) took 40-50 ms in each forked worker, both
    at once, more than the rest of the start of a DataLoader. Done once; a forked
    worker inherits it."""
    if ctx.get_start_method() == "fork" and "numpy" in sys.modules:
        import numpy.random  # noqa: F401


def preload_forkserver(ctx) -> None:
    """Forkserver workers start from a server that imported flambeau once (unless the
    program chose its own preload list, or the server runs already)."""
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if getattr(server, "_forkserver_pid", None) is None and server._preload_modules == ["__main__"]:
        ctx.set_forkserver_preload(["__main__", "flambeau", "flambeau.utils.data"])
