"""Tensors pickle by value: dtype, shape, requires_grad and the elements.

Pickle is for passing tensors between processes (multiprocessing queues,
copy.deepcopy); files go through flambeau.save, which keeps views shared and
never runs code on load. A pickled view arrives as a new contiguous tensor.
Devices and generators pickle too (a spawned worker receives them): a device
by its name, a generator by its device and state (seed and position), as
PyTorch's do. Dtypes and sizes pickle by themselves.
"""

from __future__ import annotations

import copyreg

import flambeau as F

# NumPy has no bfloat16: its bits travel as int16.
_CARRIER = {"bfloat16": "int16"}


def _rebuild(array, dtype_name: str, requires_grad: bool):
    t = F.from_numpy(array)
    if dtype_name in _CARRIER:
        t = t.view(getattr(F, dtype_name))
    return t.requires_grad_(True) if requires_grad else t


def _reduce_ex(self, protocol):
    from flambeau.utils.hooks import warn_if_has_hooks

    warn_if_has_hooks(self)  # backward hooks are not pickled
    name = str(self.dtype).removeprefix("flambeau.")
    t = self.detach().cpu().contiguous()
    if name in _CARRIER:
        t = t.view(getattr(F, _CARRIER[name]))
    return _rebuild, (t.numpy().copy(), name, self.requires_grad)


def _deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment"
        )
    out = self.detach().clone().requires_grad_(self.requires_grad)
    if self.grad is not None:
        out.grad = _deepcopy(self.grad, memo)
    memo[id(self)] = out
    return out


def _reduce_device(d):
    return F.device, (str(d),)


def _rebuild_generator(device: str, state: bytes):
    g = F.Generator(device)
    g.set_state(F.tensor(list(state), dtype=F.uint8))
    return g


def _reduce_generator(g):
    return _rebuild_generator, (str(g.device), bytes(g.get_state().numpy()))


def install() -> None:
    F.Tensor.__reduce_ex__ = _reduce_ex
    F.Tensor.__deepcopy__ = _deepcopy
    copyreg.pickle(F.device, _reduce_device)
    copyreg.pickle(F.Generator, _reduce_generator)
