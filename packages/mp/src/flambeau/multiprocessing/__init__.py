"""flambeau.multiprocessing: Python's multiprocessing, with tensors shared, not copied.

A drop-in for `multiprocessing` (every public name is here), as PyTorch's
`torch.multiprocessing`: a tensor sent through a queue, a pipe, a pool or a spawned
process's arguments arrives as a view of the same memory, so an in-place write on one
side is seen on the other. Sending moves the tensor's storage to shared memory first,
as `Tensor.share_memory_()` does.

The shared memory has no name in any file system (memfd segments, see the core's
flambeau/_shared_memory.py and docs/design/shared-memory.md): nothing is left behind
however the processes end, SIGKILL included, and Docker's small /dev/shm does not
matter. Queues, pipes and pools created here carry the segments' descriptors with their
messages, a few descriptors however many tensors are sent.
"""

from __future__ import annotations

import multiprocessing as _multiprocessing

from flambeau.multiprocessing import reductions
from flambeau.multiprocessing.context import default_context as _default_context
from flambeau.multiprocessing.spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

# Python's public names: the context's functions bound to this module's default context
# (so Queue, Pipe, Pool, ... are the descriptor-carrying ones), the rest as Python has them.
for _name in _multiprocessing.__all__:
    _value = getattr(_default_context, _name, None)
    globals()[_name] = _value if _value is not None else getattr(_multiprocessing, _name)
__all__ += _multiprocessing.__all__

# PyTorch's strategies, by name. Both mean the same here: nameless memfd segments whose
# descriptors travel with messages (or are opened from the sender's /proc/<pid>/fd).
# PyTorch's file_system strategy names its segments so that no descriptor needs to
# travel, and those names leak when processes are killed; flambeau never names them.
_all_sharing_strategies = {"file_descriptor", "file_system"}
_sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Sets the strategy for sharing CPU tensors: one of get_all_sharing_strategies().
    Both use nameless shared memory here (see the module's documentation).

    >>> import flambeau.multiprocessing as mp
    >>> mp.set_sharing_strategy("file_system")
    >>> mp.get_sharing_strategy()
    'file_system'
    >>> mp.set_sharing_strategy("file_descriptor")  # the default
    """
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors.

    >>> import flambeau.multiprocessing as mp
    >>> mp.get_sharing_strategy()
    'file_descriptor'
    """
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The strategies this system supports.

    >>> import flambeau.multiprocessing as mp
    >>> sorted(mp.get_all_sharing_strategies())
    ['file_descriptor', 'file_system']
    """
    return set(_all_sharing_strategies)


reductions.init_reductions()
