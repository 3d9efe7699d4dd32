"""Rendezvous handlers, as torch.distributed.rendezvous: how init_process_group finds
(store, rank, world_size) for an init_method URL of a scheme registered here.

The MPI launcher brings the processes together, so the built-in schemes (env://,
tcp://, file://) need no handler: init_process_group reads only the world size from
them. A scheme registered with register_rendezvous_handler gets its handler called as
PyTorch calls it, and what it yields is used as a ``store=`` argument would be.
"""

from __future__ import annotations

from urllib.parse import urlparse

__all__ = ["register_rendezvous_handler"]

BUILT_IN = ("env", "tcp", "file")  # served by the MPI launcher
_handlers: dict = {}


def register_rendezvous_handler(scheme, handler) -> None:
    """Register `handler` for init_method URLs of `scheme`: a generator function
    ``handler(url, **kwargs)`` that yields ``(store, rank, world_size)``. RuntimeError
    when `scheme` already has one (env, tcp and file always do).

    >>> import flambeau.distributed as dist
    >>> def local(url, **kwargs):
    ...     yield dist.HashStore(), 0, 1
    >>> dist.register_rendezvous_handler("local", local)
    >>> try:
    ...     dist.register_rendezvous_handler("tcp", local)
    ... except RuntimeError as e:
    ...     print(e)
    Rendezvous handler for tcp:// already registered
    """
    if scheme in _handlers or scheme in BUILT_IN:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def registered_handler(init_method: str | None):
    """The handler registered for the scheme of `init_method`, or None."""
    if not init_method:
        return None
    return _handlers.get(urlparse(init_method).scheme)


def rendezvous(init_method: str, rank: int, world_size: int, timeout):
    """(store, rank, world_size) from the handler of `init_method`'s scheme, called as
    PyTorch calls it: rank and world size added to the URL's query when given."""
    url = urlparse(init_method)
    query = [q for q in url.query.split("&") if q]
    if (rank != -1 or world_size != -1) and any(
        q.startswith(("rank=", "world_size=")) for q in query
    ):
        raise AssertionError(
            f"The url: {init_method} has node-specific arguments(rank, world_size) already."
        )
    if rank != -1:
        query.append(f"rank={rank}")
    if world_size != -1:
        query.append(f"world_size={world_size}")
    url = url._replace(query="&".join(query)).geturl()
    found = next(_handlers[urlparse(init_method).scheme](url, timeout=timeout), None)
    if found is None:
        raise RuntimeError(f"Unable to perform rendezvous using {init_method}")
    return found
