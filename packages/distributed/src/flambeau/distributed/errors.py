"""The exception types of torch.distributed (all RuntimeErrors, as there)."""

from __future__ import annotations

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """An error in the distributed library.

    >>> import flambeau.distributed as dist
    >>> issubclass(dist.DistError, RuntimeError)
    True
    """


class DistBackendError(DistError):
    """An error in the communication backend: a dead peer, a timeout, a mismatch of
    collectives between ranks, or an error MPI reported.

    >>> import flambeau.distributed as dist
    >>> issubclass(dist.DistBackendError, dist.DistError)
    True
    """


class DistNetworkError(DistError):
    """A network error (raised by rendezvous in PyTorch; kept for compatible handlers).

    >>> import flambeau.distributed as dist
    >>> issubclass(dist.DistNetworkError, dist.DistError)
    True
    """


class DistStoreError(DistError):
    """An error of a key-value store (kept for compatible handlers).

    >>> import flambeau.distributed as dist
    >>> issubclass(dist.DistStoreError, dist.DistError)
    True
    """
