"""flambeau.futures: PyTorch's ``torch.futures`` (``Future``, ``collect_all``, ``wait_all``).

A Future holds the value (or the exception) of an asynchronous computation: the result of
a collective posted with ``async_op=True`` (``Work.get_future()``) or of a DDP
communication hook. Callbacks run in the thread that completes the future (at once when
it is already complete); ``then`` chains a new Future onto the callback's result.

Part of the core (loaded on first use, as ``flambeau.futures``); flambeau-distributed's
collectives and DDP's communication hooks produce them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")

_COMPLETED_TWICE = (
    "Attempting to mark a completed Future as complete again. Note that a Future can only "
    "be marked completed once."
)


class Future(Generic[T]):
    """The value of an asynchronous computation, as torch.futures.Future.

    ``wait()`` blocks until it is set (and raises the exception it was completed with);
    ``then(callback)`` returns a Future of ``callback(this_future)``;
    ``add_done_callback`` runs a callback once it is done.

    >>> from flambeau.futures import Future
    >>> fut = Future()
    >>> doubled = fut.then(lambda f: f.value() * 2)
    >>> fut.set_result(flambeau.tensor([1.0, 2.0]))
    >>> doubled.wait()
    tensor([2., 4.])
    """

    def __init__(self, *, devices=None):
        import flambeau

        for d in devices or []:
            if flambeau.device(d).type != "cpu":
                raise ValueError(
                    f"Future: device {d} is not usable here; flambeau.futures holds CPU values"
                )
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable] = []
        # Called by wait() before blocking: makes progress on what completes this future
        # (polls the MPI request when no communication thread does).
        self._driver: Callable[[], None] | None = None

    def done(self) -> bool:
        """True once the future holds a value or an exception."""
        return self._done

    def wait(self) -> T:
        """Block until the value is ready and return it; raise the error it holds."""
        if not self._done and self._driver is not None:
            try:
                self._driver()
            except BaseException as e:  # the error completes this future too
                if not self._done:
                    self._complete(None, e)
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self) -> T:
        """The value of a completed future (after wait(), or inside a callback)."""
        if not self._done:
            raise RuntimeError("Future.value() called on a Future that has not completed yet")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: T) -> None:
        """Complete the future with `result` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error, which wait() and value() raise."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A Future of ``callback(self)``, run once this one completes; an exception the
        callback raises (or this future's error, if the callback re-raises it through
        value()) completes the new future."""
        child: Future = Future()
        child._driver = self.wait

        def run(fut):
            try:
                result = callback(fut)
            except BaseException as e:
                child._complete(None, e)
            else:
                child._complete(result, None)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` once this future completes (now, if it has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def _complete(self, value, error) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError(_COMPLETED_TWICE)
            self._value, self._error = value, error
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def __repr__(self) -> str:
        state = "done" if self._done else "pending"
        return f"<flambeau.futures.Future ({state})>"


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A Future completed, with the list of `futures`, once all of them are complete.

    >>> from flambeau.futures import Future, collect_all
    >>> a, b = Future(), Future()
    >>> both = collect_all([a, b])
    >>> a.set_result(1); b.set_result(2)
    >>> [f.value() for f in both.wait()]
    [1, 2]
    """
    futures = list(futures)
    combined: Future = Future()
    combined._driver = lambda: _wait_quietly(futures)
    if not futures:
        combined.set_result([])
        return combined
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            combined.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return combined


def _wait_quietly(futures) -> None:
    for f in futures:
        try:
            f.wait()
        except Exception:
            pass  # the error stays in that future, for its owner to read


def wait_all(futures: list[Future]) -> list:
    """The values of `futures`, waiting for each; raises the first error met.

    >>> from flambeau.futures import Future, wait_all
    >>> a, b = Future(), Future()
    >>> a.set_result(1); b.set_result(2)
    >>> wait_all([a, b])
    [1, 2]
    """
    return [f.wait() for f in futures]
