"""Collectives of picklable Python objects.

As in PyTorch these pickle, and unpickling runs code chosen by the sender: use them
only among ranks you trust (your own job). Tensors go through the byte buffers of the
tensor collectives; only the pickled bytes are new.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np

from .process_group import resolve_group
from .work import Operation

__all__ = [
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "recv_object_list",
    "scatter_object_list",
    "send_object_list",
]


def _dumps(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)


def _loads(buf: np.ndarray):
    return pickle.loads(buf.tobytes())


def _offsets(counts):
    return [int(v) for v in np.concatenate(([0], np.cumsum(counts)[:-1]))]


def _gather_sizes(pg, desc, n: int) -> list[int]:
    sizes = np.zeros(pg.size(), dtype=np.int64)
    Operation(pg, [pg.comm.Iallgather(np.array([n], np.int64), sizes)], desc).drive()
    return [int(s) for s in sizes]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace the items of `object_list` on every rank with those of rank `src`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> objs = [{"lr": 0.1}, "config"] if dist.get_rank() == 0 else [None, None]
    >>> dist.broadcast_object_list(objs, src=0)
    >>> objs
    [{'lr': 0.1}, 'config']
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        return
    root = pg.root(src, group_src, "src")
    desc = pg.begin("broadcast_object_list", root=root)
    size = np.zeros(1, np.int64)
    data = _dumps(list(object_list)) if pg.rank() == root else None
    if data is not None:
        size[0] = data.size
    Operation(pg, [pg.comm.Ibcast(size, root=root)], desc).drive()
    if data is None:
        data = np.empty(int(size[0]), np.uint8)
    Operation(pg, [pg.comm.Ibcast(data, root=root)], desc).drive()
    if pg.rank() != root:
        got = _loads(data)
        for i in range(min(len(object_list), len(got))):
            object_list[i] = got[i]


def all_gather_object(object_list, obj, group=None) -> None:
    """object_list[i] = `obj` of group rank i, on every rank.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [None] * dist.get_world_size()
    >>> dist.all_gather_object(out, {"rank": dist.get_rank()})
    >>> out
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError("all_gather_object: object_list must have one entry per rank")
    desc = pg.begin("all_gather_object")
    mine = _dumps(obj)
    counts = _gather_sizes(pg, desc, mine.size)
    out = np.empty(sum(counts), np.uint8)
    Operation(pg, [pg.comm.Iallgatherv(mine, [out, (counts, _offsets(counts))])], desc).drive()
    for i, (start, n) in enumerate(zip(_offsets(counts), counts)):
        object_list[i] = _loads(out[start : start + n])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    """object_gather_list[i] = `obj` of group rank i, on rank `dst`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [None] * dist.get_world_size()
    >>> dist.gather_object(f"rank {dist.get_rank()}", out if dist.get_rank() == 0 else None, dst=0)
    >>> out
    ['rank 0']
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        return
    root = pg.root(dst, group_dst, "dst")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError("gather_object: object_gather_list must have one entry per rank on dst")
    desc = pg.begin("gather_object", root=root)
    mine = _dumps(obj)
    counts = _gather_sizes(pg, desc, mine.size)
    if pg.rank() != root:
        Operation(pg, [pg.comm.Igatherv(mine, None, root=root)], desc).drive()
        return
    out = np.empty(sum(counts), np.uint8)
    req = pg.comm.Igatherv(mine, [out, (counts, _offsets(counts))], root=root)
    Operation(pg, [req], desc).drive()
    for i, (start, n) in enumerate(zip(_offsets(counts), counts)):
        object_gather_list[i] = _loads(out[start : start + n])


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None, group_src=None
) -> None:
    """scatter_object_output_list[0] = scatter_object_input_list[i] of rank `src`, on group
    rank i.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> out = [None]
    >>> dist.scatter_object_list(out, ["for rank 0"] if dist.get_rank() == 0 else None, src=0)
    >>> out
    ['for rank 0']
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    root = pg.root(src, group_src, "src")
    desc = pg.begin("scatter_object_list", root=root)
    counts = np.zeros(pg.size(), np.int64)
    send = None
    if pg.rank() == root:
        parts = [_dumps(o) for o in scatter_object_input_list]
        counts[:] = [p.size for p in parts]
        send = np.concatenate(parts)
    Operation(pg, [pg.comm.Ibcast(counts, root=root)], desc).drive()
    mine = np.empty(int(counts[pg.rank()]), np.uint8)
    spec = [send, ([int(c) for c in counts], _offsets(counts))] if send is not None else None
    Operation(pg, [pg.comm.Iscatterv(spec, mine, root=root)], desc).drive()
    scatter_object_output_list[0] = _loads(mine)


def _peer_group_rank(pg, global_rank, group_rank, what: str) -> int:
    """PyTorch's checks of a send's or receive's peer: exactly one of the two ranks,
    and not this process."""
    if global_rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if global_rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    peer = group_rank if group_rank is not None else pg.group_rank(global_rank)
    if group_rank is not None:
        pg.global_rank(group_rank)  # in range
    if peer == pg.rank():
        raise ValueError(
            f"Invalid {what} rank: {what} rank should not be the same as the rank of the "
            "current process."
        )
    return peer


def _object_tensors(object_list, device):
    import flambeau

    blobs = [pickle.dumps(obj) for obj in object_list]
    sizes = flambeau.tensor([len(b) for b in blobs], dtype=flambeau.int64)
    data = flambeau.from_numpy(np.frombuffer(b"".join(blobs), dtype=np.uint8).copy())
    if device is not None:
        sizes, data = sizes.to(device), data.to(device)
    return sizes, data


def send_object_list(
    object_list, dst=None, group=None, device=None, group_dst=None, use_batch: bool = False
) -> None:
    """Send the picklable objects of `object_list` to rank `dst` (or group rank
    `group_dst`), which receives them with :func:`recv_object_list` into a list of the
    same length. As in PyTorch the objects are pickled and sent as two tensors (their
    sizes, then their bytes) through :func:`send`; unpickling runs code the sender
    chose, so use it only between ranks you trust.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here: it cannot send to itself
    >>> try:
    ...     dist.send_object_list(["foo", 12, {1: 2}], dst=0)
    ... except ValueError as e:
    ...     print(e)
    Invalid destination rank: destination rank should not be the same as the rank of ...
    >>> dist.destroy_process_group()
    """
    from .p2p import P2POp, batch_isend_irecv, isend, send

    pg = resolve_group(group)
    if pg is None:
        warnings.warn(
            "Running send_object_list on a rank which does not belong to the given group.",
            stacklevel=2,
        )
        return
    peer = _peer_group_rank(pg, dst, group_dst, "destination")
    sizes, data = _object_tensors(object_list, device)
    for tensor in (sizes, data):
        if use_batch:
            batch_isend_irecv([P2POp(isend, tensor, group=group, group_peer=peer)]).pop().wait()
        else:
            send(tensor, group=group, group_dst=peer)


def recv_object_list(
    object_list, src=None, group=None, device=None, group_src=None, use_batch: bool = False
) -> int:
    """Receive into `object_list` the objects rank `src` (or group rank `group_src`) sent
    with :func:`send_object_list` (a list of as many items); returns the sender's
    global rank (-1 on a rank outside `group`). Unpickles what was sent: use it only
    between ranks you trust.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here: no one else to receive from
    >>> objs = [None, None, None]
    >>> try:
    ...     dist.recv_object_list(objs, src=0)
    ... except ValueError as e:
    ...     print(e)
    Invalid source rank: source rank should not be the same as the rank of the ...
    >>> dist.destroy_process_group()
    """
    import flambeau

    from .p2p import P2POp, batch_isend_irecv, irecv, recv

    pg = resolve_group(group)
    if pg is None:
        warnings.warn(
            "Running recv_object_list on a rank which does not belong to the given group.",
            stacklevel=2,
        )
        return -1
    peer = _peer_group_rank(pg, src, group_src, "source")

    def receive(tensor) -> int:
        if use_batch:
            op = P2POp(irecv, tensor, group=group, group_peer=peer)
            batch_isend_irecv([op]).pop().wait()
            return pg.global_rank(peer)
        return recv(tensor, group=group, group_src=peer)

    sizes = flambeau.empty(len(object_list), dtype=flambeau.int64, device=device)
    sender = receive(sizes)
    counts = [int(n) for n in sizes.tolist()]
    data = flambeau.empty(sum(counts), dtype=flambeau.uint8, device=device)
    if receive(data) != sender:
        raise AssertionError("Mismatch in return ranks for object sizes and objects.")
    raw = data.cpu().numpy().tobytes()
    offset = 0
    for i, n in enumerate(counts):
        object_list[i] = pickle.loads(raw[offset : offset + n])
        offset += n
    return sender
