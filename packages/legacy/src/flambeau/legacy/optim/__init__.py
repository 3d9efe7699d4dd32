"""Torch7's functional optimizers: `x, fs = algo(opfunc, x, config=None, state=None)`.

`opfunc(x)` returns `(f(x), df/dx)`; `x` (a flat tensor, e.g. from a module's
`flattenParameters()`) is updated in place and returned. `config` holds camelCase
settings; `state` keeps the optimizer's memory between calls and is `config` itself
when None.
"""

from .adadelta import adadelta
from .adagrad import adagrad
from .adam import adam
from .adamax import adamax
from .asgd import asgd
from .cg import cg
from .lbfgs import lbfgs
from .lswolfe import lswolfe, polyinterp
from .nag import nag
from .rmsprop import rmsprop
from .rprop import rprop
from .sgd import sgd

__all__ = [
    "adadelta", "adagrad", "adam", "adamax", "asgd", "cg", "lbfgs", "lswolfe", "nag",
    "polyinterp", "rmsprop", "rprop", "sgd",
]  # fmt: skip
