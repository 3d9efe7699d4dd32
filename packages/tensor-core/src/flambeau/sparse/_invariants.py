"""``flambeau.sparse.check_sparse_tensor_invariants``: PyTorch's switch for validating
the indices given to sparse constructors.

flambeau validates them always (an index out of range is an error, never a silent
wrong result), so the switch only records the state PyTorch programs set and read.
"""

from __future__ import annotations

import functools


class check_sparse_tensor_invariants:  # noqa: N801 - PyTorch's name
    """Context manager and decorator enabling sparse invariant checks (always on in
    flambeau); ``enable()``, ``disable()`` and ``is_enabled()`` set and read the default.

    >>> from flambeau.sparse import check_sparse_tensor_invariants
    >>> check_sparse_tensor_invariants.is_enabled()
    False
    >>> with check_sparse_tensor_invariants():
    ...     print(check_sparse_tensor_invariants.is_enabled())
    True
    """

    _enabled = False

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable: bool = True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError(
                "This context manager instance is already activated. Use a different context "
                "manager instance for context nesting."
            )
        self.saved_state = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with type(self)(self.state):
                return func(*args, **kwargs)

        return wrapped
