"""Point-to-point: send, recv, isend, irecv, and batch_isend_irecv."""

from __future__ import annotations

from ._buffers import Staged, as_bytes, check_tensor
from ._runtime import mpi
from .process_group import resolve_group

__all__ = ["P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send"]


def _peer(pg, peer, group_peer, what: str) -> int:
    if peer is None and group_peer is None:
        raise ValueError(f"Must specify either {what} or group_{what}")
    r = pg.root(peer, group_peer, what)
    if r == pg.rank():
        raise ValueError(
            f"Invalid {'destination' if what == 'dst' else 'source'} rank: should not be the "
            "same as the rank of the current process."
        )
    return r


def _post_send(tensor, dst, group, tag, group_dst, async_op):
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    pg._world.check_usable()
    desc = f"send to rank {pg.global_rank(peer)} (tag {tag}, {tensor.numel()} elements"
    desc += f" of {tensor.dtype})"
    req = pg.comm.Isend(as_bytes(tensor.contiguous()), dest=peer, tag=tag)
    return pg.complete([req], desc, None, [tensor], async_op)


def _post_recv(tensor, src, group, tag, group_src, async_op):
    check_tensor(tensor)
    pg = resolve_group(group)
    if pg is None:
        return None, None
    MPI = mpi()
    if src is None and group_src is None:
        peer, name = MPI.ANY_SOURCE, "any rank"
    else:
        peer = _peer(pg, src, group_src, "src")
        name = f"rank {pg.global_rank(peer)}"
    pg._world.check_usable()
    desc = f"recv from {name} (tag {tag}, {tensor.numel()} elements of {tensor.dtype})"
    st = Staged(tensor, fill=False)
    statuses = [MPI.Status()]
    req = pg.comm.Irecv(as_bytes(st.tensor), source=peer, tag=tag)
    work = pg.complete([req], desc, st.finish, [tensor], async_op, statuses=statuses)
    return pg, (work, statuses)


def send(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> None:
    """Send `tensor` to rank `dst`; returns once the buffer may be reused.

    >>> import flambeau.distributed as dist
    >>> try:
    ...     dist.send(flambeau.ones(2), dst=1)  # before init_process_group
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """
    _post_send(tensor, dst, group, tag, group_dst, async_op=False)


def recv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> int:
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's
    rank (-1 when this rank is outside `group`).

    >>> import flambeau.distributed as dist
    >>> try:
    ...     dist.recv(flambeau.zeros(2), src=0)  # before init_process_group
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """
    pg, posted = _post_recv(tensor, src, group, tag, group_src, async_op=False)
    if pg is None:
        return -1
    status = posted[1][0]
    return pg.global_rank(status.Get_source())


def isend(tensor, dst=None, group=None, tag: int = 0, group_dst=None):
    """Start sending `tensor` to rank `dst`; returns a Work.

    >>> import flambeau.distributed as dist
    >>> try:
    ...     dist.isend(flambeau.ones(2), dst=1)  # before init_process_group
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """
    return _post_send(tensor, dst, group, tag, group_dst, async_op=True)


def irecv(tensor, src=None, group=None, tag: int = 0, group_src=None):
    """Start receiving into `tensor` from rank `src` (any rank when None); returns a Work.

    >>> import flambeau.distributed as dist
    >>> try:
    ...     dist.irecv(flambeau.zeros(2), src=0)  # before init_process_group
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """
    pg, posted = _post_recv(tensor, src, group, tag, group_src, async_op=True)
    return None if pg is None else posted[0]


class P2POp:
    """One send or receive for batch_isend_irecv: P2POp(dist.isend, tensor, peer).

    >>> import flambeau.distributed as dist
    >>> op = dist.P2POp(dist.isend, flambeau.ones(2), peer=1)
    >>> op.op is dist.isend, op.peer
    (True, 1)
    """

    def __init__(self, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``flambeau.distributed.isend`` "
                "or ``flambeau.distributed.irecv``."
            )
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer


def batch_isend_irecv(p2p_op_list) -> list:
    """Post every send and receive of the list; returns their Works.

    >>> import flambeau.distributed as dist
    >>> ops = [dist.P2POp(dist.isend, flambeau.ones(2), peer=1)]
    >>> try:
    ...     dist.batch_isend_irecv(ops)  # before init_process_group
    ... except ValueError as e:
    ...     print(e)
    Default process group has not been initialized, please make sure to call init_process_group.
    """
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type P2POp.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works
