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
from flambeau.profiler._steps import KinetoStepTracker, RecordScope
from flambeau.profiler._types import DeviceType, ProfilerActivity, kineto_available

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "KinetoStepTracker",
    "Optimizer",
    "ProfilerAction",
    "ProfilerActivity",
    "RecordScope",
    "kineto_available",
    "profile",
    "record_function",
    "register_optimizer_step_post_hook",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


def __getattr__(name):
    # torch.profiler names the optimizer base class and its global step hook; they live in
    # flambeau-optim, which the core does not depend on, so they load on first access.
    if name in ("Optimizer", "register_optimizer_step_post_hook"):
        try:
            from flambeau.optim import optimizer
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(
                f"flambeau.profiler.{name} is provided by the distribution 'flambeau-optim', "
                "which is not installed"
            ) from e
        return getattr(optimizer, name)
    raise AttributeError(f"module 'flambeau.profiler' has no attribute {name!r}")
