"""The exception types of torch.distributed (all RuntimeErrors, as there)."""

from __future__ import annotations

__all__ = [
    "DistError",
    "DistBackendError",
    "DistNetworkError",
    "DistStoreError",
    "QueueEmptyError",
]


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
    """A network error: a :class:`TCPStore` that cannot reach its server (none listening
    in time, or the connection lost), or a server that cannot listen on its port.

    >>> import flambeau.distributed as dist
    >>> from datetime import timedelta
    >>> server = dist.TCPStore("127.0.0.1", 0, is_master=True)  # on a free port
    >>> port = server.port
    >>> del server  # its server stops
    >>> try:  # nobody listens there any more
    ...     dist.TCPStore("127.0.0.1", port, timeout=timedelta(seconds=0.2))
    ... except dist.DistNetworkError:
    ...     print("no server")
    no server
    """


class DistStoreError(DistError):
    """An error of a key-value store: above all a key that did not appear before the
    store's timeout (:meth:`Store.get`, :meth:`Store.wait`).

    >>> import flambeau.distributed as dist
    >>> from datetime import timedelta
    >>> store = dist.HashStore()
    >>> try:
    ...     store.wait(["never set"], timedelta(seconds=0.05))
    ... except dist.DistStoreError as e:
    ...     print(e)
    wait timeout after 50ms, keys: never set
    """


class QueueEmptyError(DistStoreError):
    """Raised by ``Store.queue_pop(key, block=False)`` when the queue is empty.

    >>> import flambeau.distributed as dist
    >>> try:
    ...     dist.HashStore().queue_pop("jobs", block=False)
    ... except dist.QueueEmptyError as e:
    ...     print(e)
    queue is empty
    """
