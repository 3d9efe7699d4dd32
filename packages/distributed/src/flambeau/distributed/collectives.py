"""The tensor collectives of torch.distributed, posted as nonblocking MPI calls on the
tensors' own memory (see _buffers.py) and completed by process_group.complete."""

from __future__ import annotations

import warnings

import numpy as np

import flambeau

from ._buffers import (
    Staged,
    as_bytes,
    as_typed,
    check_tensor,
    check_tensor_list,
    divide_for_avg,
    mpi_op,
    nbytes,
)
from ._runtime import mpi
from .process_group import resolve_group
from .reduce_op import RedOpType, ReduceOp, as_red_op, supports_complex

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "gather",
    "monitored_barrier",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_single",
    "reduce_scatter_tensor",
    "scatter",
]


def _warn_not_member(op: str) -> None:
    warnings.warn(f"Running {op} on a rank which does not belong to the given group.", stacklevel=3)


def check_complex_op(tensors, red: RedOpType, op_name: str = "all_reduce") -> None:
    """PyTorch's refusal of MIN, MAX, PRODUCT and bitwise reductions of complex tensors."""
    if any(t.is_complex() for t in tensors) and not supports_complex(red):
        raise ValueError(f"{op_name} does not support {red} on complex tensors")


def _from_bytes(chunk: np.ndarray, like):
    """A tensor shaped and typed like `like` over the bytes `chunk` (no copy)."""
    return flambeau.from_numpy(chunk).view(like.dtype).reshape(tuple(like.shape))


def _copy_chunks(buffer: np.ndarray, tensors) -> None:
    offset = 0
    with flambeau.no_grad():
        for t in tensors:
            n = nbytes(t)
            if n:
                t.copy_(_from_bytes(buffer[offset : offset + n], t))
            offset += n


def _concat_bytes(tensors) -> np.ndarray:
    parts = [as_bytes(t.contiguous()) for t in tensors]
    return np.concatenate(parts) if parts else np.empty(0, np.uint8)


def _offsets(counts: list[int]) -> list[int]:
    return [int(v) for v in np.concatenate(([0], np.cumsum(counts)[:-1]))] if counts else []


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `tensor` over every rank of the group, in place on each.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here: the sum is the tensor itself
    >>> x = flambeau.tensor([1.0, 2.0])
    >>> dist.all_reduce(x, op=dist.ReduceOp.SUM)
    >>> x
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(tensor)
    red = as_red_op(op)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_reduce")
    check_complex_op([tensor], red)
    desc = pg.begin("all_reduce", tensor.dtype, tensor.numel(), redop=int(red))
    st = Staged(tensor, reduction=True)
    req = pg.comm.Iallreduce(mpi().IN_PLACE, as_typed(st.tensor), mpi_op(red, st.tensor.dtype))

    def finish():
        if red == RedOpType.AVG:
            divide_for_avg(st.tensor, pg.size())
        st.finish()

    return pg.complete([req], desc, finish, [tensor], async_op)


def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    """Copy `tensor` of rank `src` into `tensor` of every rank.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> x = flambeau.tensor([1.0, 2.0]) if dist.get_rank() == 0 else flambeau.zeros(2)
    >>> dist.broadcast(x, src=0)
    >>> x
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("broadcast")
    root = pg.root(src, group_src, "src")
    desc = pg.begin("broadcast", tensor.dtype, tensor.numel(), root=root)
    st = Staged(tensor, fill=pg.rank() == root)
    req = pg.comm.Ibcast(as_bytes(st.tensor), root=root)
    return pg.complete([req], desc, st.finish, [tensor], async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    """Reduce `tensor` over the group into `tensor` of rank `dst`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> x = flambeau.tensor([1.0, 2.0])
    >>> dist.reduce(x, dst=0, op=dist.ReduceOp.MAX)
    >>> x
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(tensor)
    red = as_red_op(op)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("reduce")
    root = pg.root(dst, group_dst, "dst")
    desc = pg.begin("reduce", tensor.dtype, tensor.numel(), root=root, redop=int(red))
    st = Staged(tensor, reduction=True)
    buf, mop, MPI = as_typed(st.tensor), mpi_op(red, st.tensor.dtype), mpi()
    if pg.rank() == root:
        req = pg.comm.Ireduce(MPI.IN_PLACE, buf, mop, root=root)
    else:
        req = pg.comm.Ireduce(buf, None, mop, root=root)

    def finish():
        if pg.rank() == root:
            if red == RedOpType.AVG:
                divide_for_avg(st.tensor, pg.size())
            st.finish()

    return pg.complete([req], desc, finish, [tensor], async_op)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Every rank's `tensor` into `tensor_list` (one per rank) on every rank.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [flambeau.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(out, flambeau.tensor([1.0, 2.0]))
    >>> out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    check_tensor_list(tensor_list, "tensor_list")
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_gather")
    if len(tensor_list) != pg.size():
        raise ValueError(
            f"all_gather: tensor_list has {len(tensor_list)} tensors, the group {pg.size()} ranks"
        )
    if any(t.dtype != tensor.dtype for t in tensor_list):
        raise ValueError("all_gather: tensor_list must have the dtype of tensor")
    desc = pg.begin("all_gather", tensor.dtype, tensor.numel())
    counts = [nbytes(t) for t in tensor_list]
    out = np.empty(sum(counts), dtype=np.uint8)
    send = as_bytes(tensor.contiguous())
    req = pg.comm.Iallgatherv(send, [out, (counts, _offsets(counts))])
    return pg.complete([req], desc, lambda: _copy_chunks(out, tensor_list), tensor_list, async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's `input_tensor`, concatenated (or stacked) in rank order along the
    first dimension, into `output_tensor` (world size times as many elements; the
    inputs have one size on every rank).

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(2 * dist.get_world_size())
    >>> dist.all_gather_single(out, flambeau.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_gather_single")
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("all_gather_single: output and input must have the same dtype")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(
            "all_gather_single: output tensor size must be equal to world_size times "
            "input tensor size"
        )
    desc = pg.begin("all_gather_single", input_tensor.dtype, input_tensor.numel())
    st = Staged(output_tensor, fill=False)
    req = pg.comm.Iallgather(as_bytes(input_tensor.contiguous()), as_bytes(st.tensor))
    return pg.complete([req], desc, st.finish, [output_tensor], async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """:func:`all_gather_single` under its former name, deprecated in PyTorch 2.13 (a
    FutureWarning says so).

    >>> import warnings
    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(2 * dist.get_world_size())
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     dist.all_gather_into_tensor(out, flambeau.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    warnings.warn(
        "`torch.distributed.all_gather_into_tensor` is deprecated. "
        "Please use `torch.distributed.all_gather_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op: bool = False, group_dst=None):
    """Every rank's `tensor` into `gather_list` of rank `dst`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [flambeau.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.gather(flambeau.tensor([1.0, 2.0]), out if dist.get_rank() == 0 else None, dst=0)
    >>> out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("gather")
    root = pg.root(dst, group_dst, "dst")
    if pg.rank() == root:
        check_tensor_list(gather_list, "gather_list")
        if len(gather_list) != pg.size():
            raise ValueError("Argument ``gather_list`` must have one tensor per rank")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    desc = pg.begin("gather", tensor.dtype, tensor.numel(), root=root)
    send = as_bytes(tensor.contiguous())
    if pg.rank() == root:
        counts = [nbytes(t) for t in gather_list]
        out = np.empty(sum(counts), dtype=np.uint8)
        req = pg.comm.Igatherv(send, [out, (counts, _offsets(counts))], root=root)
        finish = lambda: _copy_chunks(out, gather_list)  # noqa: E731
    else:
        req, finish = pg.comm.Igatherv(send, None, root=root), None
    return pg.complete([req], desc, finish, gather_list or [], async_op)


def scatter(
    tensor, scatter_list=None, src=None, group=None, async_op: bool = False, group_src=None
):
    """The i-th tensor of `scatter_list` on rank `src` into `tensor` of group rank i.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> x = flambeau.zeros(2)
    >>> dist.scatter(x, [flambeau.tensor([1.0, 2.0])] if dist.get_rank() == 0 else None, src=0)
    >>> x
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("scatter")
    root = pg.root(src, group_src, "src")
    if pg.rank() == root:
        check_tensor_list(scatter_list, "scatter_list")
        if len(scatter_list) != pg.size():
            raise ValueError("Argument ``scatter_list`` must have one tensor per rank")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    desc = pg.begin("scatter", tensor.dtype, tensor.numel(), root=root)
    st = Staged(tensor, fill=False)
    recv = as_bytes(st.tensor)
    if pg.rank() == root:
        counts = [nbytes(t) for t in scatter_list]
        send = _concat_bytes(scatter_list)
        req = pg.comm.Iscatterv([send, (counts, _offsets(counts))], recv, root=root)
    else:
        req = pg.comm.Iscatterv(None, recv, root=root)
    return pg.complete([req], desc, st.finish, [tensor], async_op)


def _reduced_input(tensors, widen_to):
    """One contiguous tensor of the inputs, in the dtype the reduction runs in."""
    flat = flambeau.cat([t.detach().reshape(-1) for t in tensors])
    return flat.to(widen_to) if flat.dtype != widen_to else flat


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce the i-th tensors of every rank's `input_list` into `output` of group rank i.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(2)
    >>> dist.reduce_scatter(out, [flambeau.tensor([1.0, 2.0])])
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(output, "output")
    check_tensor_list(input_list, "input_list")
    red = as_red_op(op)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("reduce_scatter")
    if len(input_list) != pg.size():
        raise ValueError("reduce_scatter: input_list must have one tensor per rank")
    if any(t.dtype != output.dtype for t in input_list):
        raise ValueError("reduce_scatter: input tensors must have the dtype of output")
    desc = pg.begin("reduce_scatter", output.dtype, output.numel(), redop=int(red))
    st = Staged(output, reduction=True, fill=False)
    send = _reduced_input(input_list, st.tensor.dtype)
    counts = [t.numel() for t in input_list]
    req = pg.comm.Ireduce_scatter(
        as_typed(send), as_typed(st.tensor), counts, mpi_op(red, st.tensor.dtype)
    )

    def finish():
        del send_ref[:]
        if red == RedOpType.AVG:
            divide_for_avg(st.tensor, pg.size())
        st.finish()

    send_ref = [send]  # keeps the send buffer alive until MPI is done with it
    return pg.complete([req], desc, finish, [output], async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `input` (world size chunks, concatenated or stacked along the first
    dimension) over the group; chunk i of the result into `output` of group rank i.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(2)
    >>> dist.reduce_scatter_single(out, flambeau.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    check_tensor(output, "output")
    check_tensor(input, "input")
    red = as_red_op(op)
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("reduce_scatter_single")
    if input.dtype != output.dtype:
        raise ValueError("reduce_scatter_single: input and output must have the same dtype")
    if input.numel() != output.numel() * pg.size():
        raise ValueError(
            "reduce_scatter_single: input tensor must be the same size as output size times "
            "world size"
        )
    desc = pg.begin("reduce_scatter_single", output.dtype, output.numel(), redop=int(red))
    src = Staged(input, reduction=True)
    st = Staged(output, reduction=True, fill=False)
    req = pg.comm.Ireduce_scatter_block(
        as_typed(src.tensor), as_typed(st.tensor), mpi_op(red, st.tensor.dtype)
    )

    def finish():
        if red == RedOpType.AVG:
            divide_for_avg(st.tensor, pg.size())
        st.finish()

    return pg.complete([req], desc, finish, [output], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """:func:`reduce_scatter_single` under its former name, deprecated in PyTorch 2.13 (a
    FutureWarning says so).

    >>> import warnings
    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(2)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     dist.reduce_scatter_tensor(out, flambeau.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    warnings.warn(
        "`torch.distributed.reduce_scatter_tensor` is deprecated. "
        "Please use `torch.distributed.reduce_scatter_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return reduce_scatter_single(output, input, op, group, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """The i-th input tensor of every rank j into the j-th output tensor of rank i.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [flambeau.zeros(2)]
    >>> dist.all_to_all(out, [flambeau.tensor([1.0, 2.0])])
    >>> out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    check_tensor_list(output_tensor_list, "output_tensor_list")
    check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_to_all")
    if len(output_tensor_list) != pg.size() or len(input_tensor_list) != pg.size():
        raise ValueError("all_to_all: the tensor lists must have one tensor per rank")
    dtype = input_tensor_list[0].dtype
    desc = pg.begin("all_to_all", dtype, sum(t.numel() for t in input_tensor_list))
    send_counts = [nbytes(t) for t in input_tensor_list]
    recv_counts = [nbytes(t) for t in output_tensor_list]
    send = _concat_bytes(input_tensor_list)
    out = np.empty(sum(recv_counts), dtype=np.uint8)
    req = pg.comm.Ialltoallv(
        [send, (send_counts, _offsets(send_counts))], [out, (recv_counts, _offsets(recv_counts))]
    )
    return pg.complete(
        [req], desc, lambda: _copy_chunks(out, output_tensor_list), output_tensor_list, async_op
    )


def _split_bytes(t, splits, size: int, what: str) -> list[int]:
    rows = t.shape[0] if t.dim() else 1
    row_bytes = nbytes(t) // rows if rows else 0
    if splits is None or len(splits) == 0:
        if rows % size:
            raise ValueError(f"all_to_all_single: {what} has {rows} rows, not divisible by {size}")
        return [rows // size * row_bytes] * size
    splits = [int(s) for s in splits]
    if len(splits) != size or sum(splits) != rows:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {splits} do not split {rows} rows")
    return [s * row_bytes for s in splits]


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """Split `input` along dim 0 and send part i to rank i; receive into `output` in rank
    order (equal parts, or the given split sizes).

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = flambeau.zeros(3)
    >>> dist.all_to_all_single(out, flambeau.tensor([1.0, 2.0, 3.0]))
    >>> out
    tensor([1., 2., 3.])
    >>> dist.destroy_process_group()
    """
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("all_to_all_single")
    if output.dtype != input.dtype:
        raise ValueError("all_to_all_single: output and input must have the same dtype")
    desc = pg.begin("all_to_all_single", input.dtype, input.numel())
    send_counts = _split_bytes(input, input_split_sizes, pg.size(), "input")
    recv_counts = _split_bytes(output, output_split_sizes, pg.size(), "output")
    st = Staged(output, fill=False)
    req = pg.comm.Ialltoallv(
        [as_bytes(input.contiguous()), (send_counts, _offsets(send_counts))],
        [as_bytes(st.tensor), (recv_counts, _offsets(recv_counts))],
    )
    return pg.complete([req], desc, st.finish, [output], async_op)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached the barrier.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> dist.barrier()  # returns once every rank has called it
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("barrier")
    desc = pg.begin("barrier")
    req = pg.comm.Ibarrier()
    if timeout is None:
        return pg.complete([req], desc, None, [], async_op)
    saved = pg.timeout_seconds
    pg.timeout_seconds = timeout.total_seconds()
    try:
        return pg.complete([req], desc, None, [], async_op)
    finally:
        pg.timeout_seconds = saved


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    """A barrier through rank 0 that names the ranks that failed to reach it in time.

    >>> import flambeau.distributed as dist
    >>> from datetime import timedelta
    >>> dist.init_process_group()
    >>> dist.monitored_barrier(timeout=timedelta(seconds=30))
    >>> dist.destroy_process_group()
    """
    from datetime import timedelta

    from .errors import DistBackendError
    from .work import Operation

    pg = resolve_group(group)
    if pg is None:
        return _warn_not_member("monitored_barrier")
    desc = pg.begin("barrier")
    limit = timeout or pg.timeout
    tag = 7002
    token = np.zeros(1, np.uint8)
    if pg.rank() != 0:
        saved = pg.timeout_seconds
        pg.timeout_seconds = limit.total_seconds()
        try:
            Operation(pg, [pg.comm.Isend(token, 0, tag)], desc).drive()
            Operation(pg, [pg.comm.Irecv(np.zeros(1, np.uint8), 0, tag)], desc).drive()
        finally:
            pg.timeout_seconds = saved
        return None
    import time

    bufs = {r: np.zeros(1, np.uint8) for r in range(1, pg.size())}
    reqs = {r: pg.comm.Irecv(bufs[r], r, tag) for r in bufs}
    deadline = time.monotonic() + limit.total_seconds()
    missing = set(reqs)
    while missing and time.monotonic() < deadline:
        missing = {r for r in missing if not reqs[r].Test()}
        if missing:
            time.sleep(1e-3)
    if missing:
        pg.mark_broken(None)
        names = sorted(pg.global_rank(r) for r in missing)
        shown = names if wait_all_ranks else names[:1]
        raise DistBackendError(
            f"[rank {pg.global_rank_of_self}] monitored_barrier: ranks {shown} failed to pass "
            f"monitoredBarrier in {timedelta(seconds=limit.total_seconds())}"
        )
    for r in range(1, pg.size()):
        Operation(pg, [pg.comm.Isend(token, r, tag)], desc).drive()
    return None
