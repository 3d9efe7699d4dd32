"""The profiler's event classes, where PyTorch keeps them (torch.autograd.profiler_util).

They live in the core's flambeau.profiler, which records them; this module names them.

>>> from flambeau.autograd.profiler_util import EventList
>>> EventList().total_average().count
0
"""

from flambeau.profiler._events import EventList, FunctionEvent, FunctionEventAvg, Interval

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]
