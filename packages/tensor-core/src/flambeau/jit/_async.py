"""``fork``/``wait``: TorchScript's task parallelism, run synchronously.

Outside TorchScript, PyTorch's ``fork`` also runs the function at once and returns a
completed future (an exception propagates from ``fork`` itself); flambeau does the same.
"""

from __future__ import annotations

from flambeau.futures import Future
from flambeau.jit._deprecation import warn_deprecated


def fork(func, *args, **kwargs) -> Future:
    """Calls ``func(*args, **kwargs)`` now and returns a completed Future of its result.

    >>> fut = flambeau.jit.fork(flambeau.add, flambeau.ones(2), 1)
    >>> fut.done()
    True
    >>> flambeau.jit.wait(fut)
    tensor([2., 2.])
    """
    warn_deprecated("fork")
    future: Future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future: Future):
    """The result of a Future (from ``fork``, or any flambeau.futures.Future).

    >>> flambeau.jit.wait(flambeau.jit.fork(lambda: 42))
    42
    """
    warn_deprecated("wait")
    if not isinstance(future, Future):
        raise TypeError(f"wait(): expected a flambeau.jit.Future, but got {type(future).__name__}")
    return future.wait()
