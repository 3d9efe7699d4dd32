"""Helpers of the DataLoader: collation, fetching, workers, pinning (as PyTorch's
``torch.utils.data._utils``)."""

from __future__ import annotations

import sys

# How often (seconds) an idle worker checks that the main process is still there.
MP_STATUS_CHECK_INTERVAL = 1.0
IS_WINDOWS = sys.platform == "win32"


def __getattr__(name):
    # PyTorch's flag, found on demand: importing NumPy costs a worker's start ~0.1 s.
    if name == "HAS_NUMPY":
        import importlib.util

        return importlib.util.find_spec("numpy") is not None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError's message prints readably."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its traceback as text, to re-raise in another process or thread."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        import traceback  # only when something failed: a worker starts without it

        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises the wrapped exception's type with the original traceback in its message
        ("Caught ValueError in DataLoader worker process 2. Original Traceback ...")."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


from flambeau.utils.data._utils import collate, fetch, pin_memory, worker  # noqa: E402

__all__ = ["ExceptionWrapper", "collate", "fetch", "pin_memory", "worker"]
