"""flambeau.legacy: Lua Torch7's `nn` and `optim` over flambeau's core alone.

`flambeau.legacy.nn` has modules with explicit forward/backward passes (no autograd),
`flambeau.legacy.optim` Torch7's functional optimizers, and `load_lua` reads Torch7's
binary `.t7` files.
"""

from . import nn, optim
from .serialization import T7ReaderError, load_lua

__all__ = ["nn", "optim", "load_lua", "T7ReaderError"]
