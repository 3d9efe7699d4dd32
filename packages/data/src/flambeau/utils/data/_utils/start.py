"""How worker processes start: the multiprocessing context and the forkserver's preload."""

from __future__ import annotations

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


def preload_forkserver(ctx) -> None:
    """Forkserver workers start from a server that imported flambeau once (unless the
    program chose its own preload list, or the server runs already)."""
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if getattr(server, "_forkserver_pid", None) is None and server._preload_modules == ["__main__"]:
        ctx.set_forkserver_preload(["__main__", "flambeau", "flambeau.utils.data"])
