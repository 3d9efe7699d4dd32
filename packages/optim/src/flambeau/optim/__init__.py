"""flambeau.optim: PyTorch's optimizers and learning-rate schedulers.

Updates run as multi-tensor ``flambeau._foreach_*`` operators over all the
parameters of a group (``foreach=False`` updates one parameter at a time, for
testing). This package is the distribution ``flambeau-optim``.
"""

from . import lr_scheduler
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__version__ = "0.1.0"

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
    "swap_in_optimizer_params_and_state",
]


def __getattr__(name):
    # swa_utils needs flambeau-nn (AveragedModel is a Module), which flambeau.optim does
    # not: it loads on first use, and says which distribution is missing if it is.
    if name == "swa_utils":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
