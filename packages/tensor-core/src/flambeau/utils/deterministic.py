"""``flambeau.utils.deterministic.fill_uninitialized_memory``: whether, in
deterministic mode, new uninitialized memory (``empty``, ``empty_like``,
``empty_strided``, outputs that ``out=`` grows) is filled with NaN (floating
and complex dtypes) or the dtype's largest value (integers and bool). On by
default. The flag lives in the core; this module's attribute reads and sets it.
"""

import sys
import types

from flambeau import _C


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether deterministic mode fills uninitialized memory."""
        return _C._get_deterministic_fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _C._set_deterministic_fill_uninitialized_memory(mode)


# A module attribute with a getter and a setter: the module's class gets them.
sys.modules[__name__].__class__ = _Deterministic
