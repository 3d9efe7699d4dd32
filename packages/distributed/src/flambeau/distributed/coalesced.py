"""all_reduce_coalesced and all_gather_coalesced: one collective for a list of tensors
(deprecated in PyTorch, with its FutureWarning). The tensors are packed into one
buffer, which one MPI call reduces or gathers, and unpacked when it completes; as in
PyTorch, the shapes are not compared between ranks, only the total size."""

from __future__ import annotations

import warnings

import numpy as np

import flambeau

from ._buffers import as_bytes, as_typed, check_tensor_list, divide_for_avg, mpi_op, nbytes
from ._runtime import mpi
from .collectives import _copy_chunks, _warn_not_member, check_complex_op
from .process_group import resolve_group
from .reduce_op import RedOpType, ReduceOp, as_red_op

__all__ = ["all_gather_coalesced", "all_reduce_coalesced"]

_WIDENED = {flambeau.float16, flambeau.bfloat16}  # reduced in float32, as elsewhere


def _real_dtype(t):
    return flambeau.view_as_real(t).dtype if t.is_complex() else t.dtype


def _ensure_same_dtype(tensors) -> None:
    """PyTorch's check: one dtype (a complex tensor counts as its real type)."""
    first = None
    for t in tensors:
        dtype = _real_dtype(t)
        if first is None:
            first = dtype
        elif dtype != first:
            raise ValueError(
                f"Invalid usage of tensors with different dtypesFound {first} and  {t.dtype}"
            )


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`torch.distributed.{name}` will be deprecated. If you must use it, please revisit "
        "our documentation later at "
        "https://pytorch.org/docs/main/distributed.html#collective-functions",
        FutureWarning,
        stacklevel=3,
    )


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce every tensor of `tensors` (one tensor, or a list of one dtype) over the
    group in place, with one collective. Deprecated in PyTorch (a FutureWarning says
    so); ``async_op=True`` returns a :class:`flambeau.futures.Future` of the tensors.

    >>> import warnings
    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here: the sums are the tensors themselves
    >>> a, b = flambeau.tensor([1.0, 2.0]), flambeau.tensor([[3.0]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     dist.all_reduce_coalesced([a, b])
    >>> a, b
    (tensor([1., 2.]), tensor([[3.]]))
    >>> dist.destroy_process_group()
    """
    _deprecated("all_reduce_coalesced")
    if isinstance(tensors, flambeau.Tensor):
        tensors = [tensors]
    check_tensor_list(tensors, "tensor")
    _ensure_same_dtype(tensors)
    red = as_red_op(op)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_reduce_coalesced")
    check_complex_op(tensors, red)
    views = [flambeau.view_as_real(t) if t.is_complex() else t for t in tensors]
    dtype = views[0].dtype if views else flambeau.float32
    work_dtype = flambeau.float32 if dtype in _WIDENED else dtype
    numel = sum(v.numel() for v in views)
    desc = pg.begin("all_reduce_coalesced", dtype, numel, redop=int(red))
    if views:
        flat = flambeau.cat([v.detach().reshape(-1).to(work_dtype) for v in views])
    else:
        flat = flambeau.empty(0, dtype=work_dtype)
    req = pg.comm.Iallreduce(mpi().IN_PLACE, as_typed(flat), mpi_op(red, work_dtype))

    def finish():
        if red == RedOpType.AVG:
            divide_for_avg(flat, pg.size())
        offset = 0
        with flambeau.no_grad():
            for v in views:
                n = v.numel()
                v.copy_(flat[offset : offset + n].reshape(tuple(v.shape)))
                offset += n

    work = pg.complete([req], desc, finish, list(tensors), async_op)
    return work.get_future() if async_op else None


def all_gather_coalesced(
    output_tensor_lists, input_tensor_list, group=None, async_op: bool = False
):
    """Gather every rank's `input_tensor_list` into ``output_tensor_lists[rank]`` on
    every rank, with one collective (each output list shaped like the input list).
    Deprecated in PyTorch (a FutureWarning says so); ``async_op=True`` returns a
    :class:`flambeau.futures.Future`.

    >>> import warnings
    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [[flambeau.zeros(2), flambeau.zeros(1)] for _ in range(dist.get_world_size())]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     dist.all_gather_coalesced(out, [flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0])])
    >>> out
    [[tensor([1., 2.]), tensor([3.])]]
    >>> dist.destroy_process_group()
    """
    _deprecated("all_gather_coalesced")
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_gather_coalesced")
    check_tensor_list(input_tensor_list, "input_tensor_list")
    _ensure_same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for output_tensor_list in output_tensor_lists:
        check_tensor_list(output_tensor_list, "output_tensor_lists")
        _ensure_same_dtype(output_tensor_list)
    if len(output_tensor_lists) != pg.size():
        raise ValueError(
            f"all_gather_coalesced: output_tensor_lists has {len(output_tensor_lists)} lists, "
            f"the group {pg.size()} ranks"
        )
    sent = sum(nbytes(t) for t in input_tensor_list)
    for i, outputs in enumerate(output_tensor_lists):
        if sum(nbytes(t) for t in outputs) != sent:
            raise ValueError(
                f"all_gather_coalesced: output_tensor_lists[{i}] does not hold as many "
                "elements as input_tensor_list"
            )
    dtype = input_tensor_list[0].dtype if input_tensor_list else None
    numel = sum(t.numel() for t in input_tensor_list)
    desc = pg.begin("all_gather_coalesced", dtype, numel)
    parts = [as_bytes(t.contiguous()) for t in input_tensor_list]
    send = np.concatenate(parts) if parts else np.empty(0, np.uint8)
    out = np.empty(sent * pg.size(), dtype=np.uint8)
    req = pg.comm.Iallgather(send, out)
    keep_alive = [send]  # MPI reads it until the gather completes

    def finish():
        keep_alive.clear()
        for rank, outputs in enumerate(output_tensor_lists):
            _copy_chunks(out[rank * sent : (rank + 1) * sent], outputs)

    outputs = [t for lst in output_tensor_lists for t in lst]
    work = pg.complete([req], desc, finish, outputs, async_op)
    return work.get_future() if async_op else None
