"""replicate: copies of a module on several devices that share its parameters' gradients."""

from __future__ import annotations

from ._devices import as_device

__all__ = ["replicate"]


def replicate(network, devices, detach: bool = False):
    """One replica of `network` per device. A replica's parameters and buffers are copies
    made by differentiable moves (unless detach=True), so gradients flow back to the
    original's parameters; its submodules are replicas too.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.parallel import replicate
    >>> model = nn.Linear(2, 1)
    >>> copies = replicate(model, ["cpu", "cpu"])
    >>> len(copies), copies[0] is model, flambeau.equal(copies[1].weight, model.weight)
    (2, False, True)
    """
    devices = [as_device(d) for d in devices]
    modules = list(network.modules())
    module_index = {id(m): i for i, m in enumerate(modules)}

    def copies(tensors, differentiable):
        result = {}
        for t in tensors:
            if id(t) not in result:
                source = t if differentiable(t) else t.detach()
                result[id(t)] = [source.to(device) for device in devices]
        return result

    params = copies(network.parameters(), lambda t: not detach)
    buffers = copies(network.buffers(), lambda t: not detach and t.requires_grad)
    replicas = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    for i, module in enumerate(modules):
        for j in range(len(devices)):
            replica = replicas[j][i]
            for key, child in module._modules.items():
                replica._modules[key] = (
                    None if child is None else replicas[j][module_index[id(child)]]
                )
            for key, p in module._parameters.items():
                replica._parameters[key] = None if p is None else params[id(p)][j]
            for key, b in module._buffers.items():
                replica._buffers[key] = None if b is None else buffers[id(b)][j]
    return [replicas[j][0] for j in range(len(devices))]
