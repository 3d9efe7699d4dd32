"""DataParallel and data_parallel: one module's forward split over the batch dim across
accelerator devices.

On a machine without an accelerator, as in PyTorch, DataParallel simply runs the wrapped
module (device_ids becomes []) and data_parallel raises.
"""

from __future__ import annotations

from itertools import chain

import flambeau

from ..modules.module import Module
from ._devices import available_device_type, resolve_devices
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _check_on_source(module, source) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != source:
            raise RuntimeError(
                "module must have its parameters and buffers on device "
                f"{source} (device_ids[0]) but found one of them on device: {t.device}"
            )


class DataParallel(Module):
    """Wraps `module`: forward scatters the inputs over device_ids along `dim`, runs a
    replica per device and gathers the outputs on output_device. Its state_dict keys are
    the module's prefixed with "module.".

    >>> import flambeau.nn as nn
    >>> model = nn.DataParallel(nn.Linear(4, 2))
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    >>> model(flambeau.randn(8, 4)).shape
    flambeau.Size([8, 2])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        device_type = available_device_type()
        if device_type is None:
            self.module = module
            self.device_ids = []
            return
        self.device_ids, self.output_device = resolve_devices(device_ids, output_device)
        self.dim = dim
        self.module = module
        self.src_device_obj = flambeau.device(device_type, self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on_source(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        # A forward without inputs still runs once, on the first device.
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not flambeau.is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):  # fmt: skip
    """The functional DataParallel: module(inputs) split over device_ids along dim, gathered
    on output_device. Needs an accelerator (PyTorch raises the same error without one).

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.parallel import data_parallel
    >>> model, x = nn.Linear(4, 2), flambeau.randn(8, 4)
    >>> if flambeau.cuda.is_available():
    ...     out = data_parallel(model.cuda(), x.cuda())  # split over every GPU
    ... else:
    ...     out = model(x)  # data_parallel needs an accelerator
    >>> out.shape
    flambeau.Size([8, 2])
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_type = available_device_type()
    if device_type is None:
        raise RuntimeError("device type could not be determined")
    device_ids, output_device = resolve_devices(device_ids, output_device)
    _check_on_source(module, flambeau.device(device_type, device_ids[0]))
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[: len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
