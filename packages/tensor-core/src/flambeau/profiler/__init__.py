"""flambeau.profiler: PyTorch's torch.profiler on the CPU.

``profile`` records every operator a program calls through flambeau (as ``aten::<name>``,
PyTorch's names), every node the autograd engine runs
(``autograd::engine::evaluate_function: <Node>``) and every ``record_function`` range,
with wall times and, on request, input shapes, net CPU memory, Python stacks and flop
counts. Results come as PyTorch's ``EventList`` tables (``key_averages().table()``) and
Chrome traces. The recorder lives in the core (csrc/python/profiler.cpp); device
activity (CUDA kernels) is not recorded.

>>> import flambeau.profiler as profiler
>>> with profiler.profile() as prof:
...     with profiler.record_function("step"):
...         y = (flambeau.ones(4, 4) @ flambeau.ones(4, 4)).relu()
>>> sorted(r.key for r in prof.key_averages())
['aten::matmul', 'aten::ones', 'aten::relu', 'step']
"""

from flambeau.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from flambeau.profiler._profile import profile, supported_activities, tensorboard_trace_handler
from flambeau.profiler._recording import record_function
from flambeau.profiler._schedule import ProfilerAction, schedule
from flambeau.profiler._types import DeviceType, ProfilerActivity, kineto_available

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
