"""parallel_apply: runs each module replica on its own inputs."""

from __future__ import annotations

from ._devices import as_device

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """[modules[i](*inputs[i], **kwargs_tup[i]) for each i]; an input that is not a list or
    tuple is the single positional argument. The replicas run one after another, in the
    caller's grad mode; an error names the replica it came from.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.parallel import parallel_apply
    >>> inputs = [flambeau.tensor([-1.0, 2.0]), flambeau.tensor([0.0])]
    >>> parallel_apply([nn.ReLU(), nn.Tanh()], inputs)
    [tensor([0., 2.]), tensor([0.])]
    """
    if len(modules) != len(inputs):
        raise AssertionError(
            f"The number of modules {len(modules)} is not equal to the number of inputs "
            f"{len(inputs)}"
        )
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(
            f"The number of modules {len(modules)} is not equal to the number of kwargs "
            f"{len(kwargs_tup)}"
        )
    if devices is None:
        devices = [None] * len(modules)
    elif len(modules) != len(devices):
        raise AssertionError(
            f"The number of modules {len(modules)} is not equal to the number of devices "
            f"{len(devices)}"
        )
    devices = [None if d is None else as_device(d) for d in devices]
    outputs = []
    for i, (module, args, kwargs) in enumerate(zip(modules, inputs, kwargs_tup)):
        args = args if isinstance(args, (list, tuple)) else (args,)
        try:
            outputs.append(module(*args, **kwargs))
        except Exception as e:
            note = f"Caught in replica {i} on device {devices[i]}."
            if hasattr(e, "add_note"):  # Python 3.11+
                e.add_note(note)
            raise
    return outputs
