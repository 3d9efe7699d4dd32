"""How tensors and storages cross process boundaries: as views of shared memory.

Registered with multiprocessing's pickler (`ForkingPickler`), so every queue, pipe, pool
and spawned process's arguments use them, Python's own `multiprocessing` objects
included. Pickling a CPU tensor moves its storage to shared memory in place (as
`share_memory_()` does) and writes where the storage lives: the segment (its identity,
and how to reach its descriptor) and the block's offset. Unpickling maps the segment,
once per process, and views the same bytes, so an in-place write on either side is seen
on the other. A view and its base pickled in one message arrive sharing one storage.

Each message takes a reference to the blocks it carries (flambeau/_shared_memory.py):
the memory cannot be reused while a message is in flight, even after its sender exits.

A segment's descriptor travels with the message over flambeau.multiprocessing's own
connections. Elsewhere (Python's own queues, a spawned child's arguments) the receiver
opens it from the sender's /proc/<pid>/fd, which needs the sender alive, as PyTorch's
file_descriptor strategy does.

Device backends register how their tensors travel with `register_device_reducer`.
"""

from __future__ import annotations

import os
from multiprocessing.reduction import ForkingPickler

import flambeau
from flambeau import _shared_memory
from flambeau.multiprocessing import _descriptors

__all__ = [
    "init_reductions",
    "rebuild_storage",
    "rebuild_tensor",
    "reduce_storage",
    "reduce_tensor",
    "register_device_reducer",
]

# device type -> reduce(tensor) -> (callable, args), for tensors not in CPU memory.
_device_reducers: dict = {}
# The storage object each shared block has in this process, while it lives: a block
# received twice, or sent and received back, gives the same storage.
_storages = _shared_memory.WeakValues()  # no callbacks: see WeakValues


def register_device_reducer(device_type: str, reduce) -> None:
    """How tensors of `device_type` cross processes: `reduce(tensor)` returns a pickle
    reduction `(callable, args)` whose call, in the receiving process, gives the tensor.
    A backend's plugin calls this when it loads (the CUDA plugin sends IPC handles).

    >>> from flambeau.multiprocessing import reductions
    >>> def reduce_as_cpu_copy(tensor):  # a backend would send an IPC handle instead
    ...     return flambeau.tensor, (tensor.tolist(),)
    >>> reductions.register_device_reducer("privateuseone", reduce_as_cpu_copy)
    """
    if not callable(reduce):
        raise TypeError(
            f"register_device_reducer: reduce must be callable, got {type(reduce).__name__}"
        )
    _device_reducers[str(device_type)] = reduce


class _StorageRef:
    """One storage in one message. Tensors pickled in the same message share it (pickle
    writes an object once), so they arrive sharing one storage."""

    __slots__ = ("storage", "__weakref__")

    def __init__(self, storage):
        self.storage = storage

    def __reduce__(self):
        return reduce_storage(self.storage)


# storage address -> its _StorageRef while a message that holds it is being pickled.
_refs = _shared_memory.WeakValues()


def _ref(storage) -> _StorageRef:
    ref = _refs.get(storage._cdata())
    if ref is None or ref.storage is not storage:
        ref = _refs[storage._cdata()] = _StorageRef(storage)
    return ref


def _block_of(storage):
    """The shared-memory block under a CPU storage, moving the storage there first."""
    block = storage._owner()
    if not isinstance(block, _shared_memory.Block):
        storage.share_memory_()
        block = storage._owner()
        if not isinstance(block, _shared_memory.Block):
            # Memory that is shared but not ours (a slice of a shared storage): a copy.
            fresh = flambeau.UntypedStorage._new_shared(storage.nbytes())
            fresh.copy_(storage)
            block = fresh._owner()
    return block


def reduce_storage(storage):
    """How an ``UntypedStorage`` is pickled for another process: a pickle reduction
    ``(rebuild_storage, args)``. The storage moves to shared memory first (as
    ``share_memory_()`` does), and the receiver gets the same bytes, not a copy. Only CPU
    storages can be sent (RuntimeError otherwise).

    >>> from flambeau.multiprocessing.reductions import reduce_storage
    >>> s = flambeau.tensor([1.0, 2.0]).untyped_storage()
    >>> rebuild, args = reduce_storage(s)
    >>> rebuild.__name__, s.is_shared(), s.nbytes()
    ('rebuild_storage', True, 8)
    """
    if storage.device.type != "cpu":
        raise RuntimeError(
            f"flambeau.multiprocessing: storages on {storage.device} cannot be sent to another "
            "process; send a tensor, or move it to the CPU first"
        )
    block = _block_of(storage)
    segment = block.segment
    _storages[(segment.key, block.offset)] = storage
    _shared_memory.take_reference(block)
    _descriptors.record_outgoing(segment)
    return rebuild_storage, (
        segment.key, os.getpid(), segment.fd, segment.size, block.offset, block.nbytes,
    )  # fmt: skip


def rebuild_storage(key, pid: int, fd: int, size: int, offset: int, nbytes: int):
    """The storage a message carried: the same bytes as the sender's.

    >>> from flambeau.multiprocessing.reductions import reduce_storage
    >>> s = flambeau.tensor([1.0, 2.0]).untyped_storage()
    >>> rebuild, args = reduce_storage(s)
    >>> rebuild(*args) is s  # in the sending process: the storage itself
    True
    """
    key = tuple(key)

    def descriptor() -> int:
        got = _descriptors.take_incoming(key)
        if got is not None:
            return got
        try:  # not carried with the message: open it from the sender
            return os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR | os.O_CLOEXEC)
        except OSError as err:
            raise RuntimeError(
                f"flambeau.multiprocessing: cannot reach the shared memory of process {pid} "
                f"({err.strerror}); it was sent through a channel that carries no descriptors, "
                "and its sender has exited. Send tensors through flambeau.multiprocessing's "
                "Queue, SimpleQueue, Pipe or Pool, which carry them."
            ) from None

    segment = _shared_memory.segment_for(key, descriptor, size)
    block = _shared_memory.adopt(segment, offset, nbytes)
    storage = _storages.get((key, offset))
    if storage is None or storage._owner() is not block:
        storage = flambeau.UntypedStorage._from_buffer(block.view, block, True)
        _storages[(key, offset)] = storage
    return storage


def reduce_tensor(tensor):
    """How a tensor is pickled for another process: a pickle reduction
    ``(rebuild_tensor, args)`` holding its class, its storage (moved to shared memory
    when the reduction is pickled) and its dtype, offset, shape, strides and
    ``requires_grad``, so that the receiver gets a view of the same memory.

    A tensor on a plugin device uses the reducer its backend registered with
    :func:`register_device_reducer` (RuntimeError when there is none). A non-leaf tensor
    that requires grad cannot be sent: autograd graphs do not cross processes, so send
    ``tensor.detach()``.

    >>> from flambeau.multiprocessing.reductions import reduce_tensor
    >>> t = flambeau.tensor([1.0, 2.0])
    >>> rebuild, (cls, storage, meta) = reduce_tensor(t)
    >>> rebuild.__name__, cls.__name__, meta  # meta: dtype, offset, shape, strides, grad
    ('rebuild_tensor', 'Tensor', (flambeau.float32, 0, (2,), (1,), False))
    """
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue)."
        )
    device = tensor.device.type
    if device != "cpu":
        reduce = _device_reducers.get(device)
        if reduce is None:
            raise RuntimeError(
                f"flambeau.multiprocessing: tensors on device '{device}' cannot be shared between "
                f"processes: its backend registered no way to share them "
                "(flambeau.multiprocessing.reductions.register_device_reducer)"
            )
        return reduce(tensor)
    meta = (
        tensor.dtype,
        tensor.storage_offset(),
        tuple(tensor.shape),
        tensor.stride(),
        tensor.requires_grad,
    )
    return rebuild_tensor, (type(tensor), _ref(tensor.untyped_storage()), meta)


def rebuild_tensor(cls, storage, meta):
    """The receiving side of :func:`reduce_tensor`: a tensor of class ``cls`` viewing
    ``storage`` with ``meta = (dtype, storage_offset, shape, stride, requires_grad)``.
    ``nn.Parameter`` and other subclasses are rebuilt as instances of their class.

    >>> import pickle
    >>> from multiprocessing.reduction import ForkingPickler
    >>> t = flambeau.tensor([1.0, 2.0])
    >>> u = pickle.loads(ForkingPickler.dumps(t))  # rebuild_tensor makes u
    >>> _ = u.add_(1)
    >>> t  # u views the same memory
    tensor([2., 3.])
    """
    dtype, offset, size, stride, requires_grad = meta
    t = storage._view(dtype, offset, list(size), list(stride))
    if cls is flambeau.Tensor:
        t.requires_grad = requires_grad
        return t
    if getattr(cls, "_is_parameter_class", False) or cls.__name__ == "Parameter":
        return cls(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t.as_subclass(cls)


def _reduce_typed_storage(storage):
    return _rebuild_typed_storage, (_ref(storage.untyped()), storage.dtype)


def _rebuild_typed_storage(untyped, dtype):
    return flambeau.TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


def _reducer_override(self, obj):
    # Every tensor class (nn.Parameter and user subclasses too), not only exact types.
    if isinstance(obj, flambeau.Tensor):
        return reduce_tensor(obj)
    return NotImplemented


def init_reductions() -> None:
    """Registers the reductions with multiprocessing's pickler (done on import).

    >>> import pickle
    >>> from multiprocessing.reduction import ForkingPickler
    >>> from flambeau.multiprocessing import reductions
    >>> reductions.init_reductions()  # done on import; calling it again changes nothing
    >>> t = flambeau.zeros(2)
    >>> _ = pickle.loads(ForkingPickler.dumps(t)).add_(1)  # what a queue does
    >>> t
    tensor([1., 1.])
    """
    ForkingPickler.register(flambeau.UntypedStorage, lambda s: _StorageRef(s).__reduce__())
    ForkingPickler.register(flambeau.TypedStorage, _reduce_typed_storage)
    for cls in flambeau.storage.LEGACY_STORAGES.values():
        ForkingPickler.register(cls, _reduce_typed_storage)
    ForkingPickler.reducer_override = _reducer_override
