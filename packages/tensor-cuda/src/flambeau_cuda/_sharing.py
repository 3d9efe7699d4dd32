"""How CUDA tensors cross processes with flambeau.multiprocessing: by CUDA IPC handle.

The sender exports its storage's block (no copy); the receiver opens the handle and
sees the same device memory, as in PyTorch. Also as in PyTorch, the sending process must
keep the tensor alive while a receiver uses it, and the start method must be spawn or
forkserver (a forked child cannot use CUDA).
"""

from __future__ import annotations

import flambeau
from flambeau_cuda._init_state import _C


def _rebuild_tensor(handle, device, nbytes, dtype, shape, stride, offset, requires_grad):
    raw = flambeau.from_dlpack(_C._ipc_open(handle, device, nbytes))  # uint8, the block
    tensor = raw.view(dtype).as_strided(shape, stride, offset)
    return tensor.requires_grad_(requires_grad) if requires_grad else tensor


def reduce_tensor(tensor):
    """A pickle reduction of a CUDA tensor that shares its memory with the receiver."""
    storage = tensor.untyped_storage()
    handle = _C._ipc_export(storage.data_ptr())
    args = (
        handle,
        tensor.device.index,
        storage.nbytes(),
        tensor.dtype,
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.storage_offset(),
        tensor.requires_grad,
    )
    return _rebuild_tensor, args


def register() -> None:
    """Tells flambeau.multiprocessing about CUDA tensors, when it is installed."""
    try:
        from flambeau.multiprocessing import reductions
    except ImportError:  # flambeau-mp is not installed: nothing to register with
        return
    reductions.register_device_reducer("cuda", reduce_tensor)
