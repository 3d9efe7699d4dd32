"""Connections that carry file descriptors with their messages.

A tensor's shared memory is a nameless memfd segment (flambeau/_shared_memory.py in the
core); another process can map it only through a descriptor. The connections here are
Unix sockets, and each message goes out with the descriptors of the segments its tensors
live in (SCM_RIGHTS), so the receiver maps them even when the sender has exited by
then. The messages keep the framing of Python's own connections (a 4-byte length, or -1
and an 8-byte length past 2 GiB), so the rest of `multiprocessing` (queues, pools,
`send`/`recv`, `poll`) works on them unchanged.

What a message carries is decided while it is pickled: the reductions
(reductions.py) record each segment a message needs in a per-thread list, and the next
send on that thread attaches them. Queues, pools and `Connection.send` pickle and send on
the same thread, one message at a time.
"""

from __future__ import annotations

import array
import io
import os
import socket
import struct
from multiprocessing import connection as _connection
from multiprocessing import reduction

from flambeau.multiprocessing import _descriptors

_MAX_FDS = 253  # the kernel's SCM_MAX_FD
_DESCRIPTORS_ONLY = -2  # a length that announces descriptors, then the real header


class Connection(_connection.Connection):
    """A duplex Unix-socket connection whose messages carry segment descriptors."""

    _sock = None

    def _socket(self) -> socket.socket:
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=self._handle)
        return self._sock

    def _close(self, _close=os.close):
        if self._sock is not None:
            self._sock.detach()  # the descriptor is closed once, below
            self._sock = None
        _close(self._handle)

    def _send_bytes(self, buf):
        n = len(buf)
        header = struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!iQ", -1, n)
        segments = _descriptors.take_outgoing()
        sock = self._socket()
        for i in range(0, max(len(segments), 1), _MAX_FDS):
            fds = array.array("i", [s.fd for s in segments[i : i + _MAX_FDS]])
            if i + _MAX_FDS >= len(segments):
                # The descriptors ride on the message's header.
                ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)] if fds else []
                self._sendmsg_all(sock, header, ancillary)
            else:
                # More segments than one message may carry: a header of descriptors only.
                self._sendmsg_all(
                    sock, struct.pack("!i", _DESCRIPTORS_ONLY),
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)],
                )  # fmt: skip
        if n:
            sock.sendall(buf)
        del segments  # held until the kernel has its own references to the descriptors

    @staticmethod
    def _sendmsg_all(sock, data: bytes, ancillary) -> None:
        sent = sock.sendmsg([data], ancillary)
        if sent < len(data):
            sock.sendall(data[sent:])

    def _recv_exact(self, size: int, first: bool):
        """`size` bytes; descriptors that arrive with them go to the incoming list."""
        sock = self._socket()
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            if got == 0:
                space = socket.CMSG_SPACE(_MAX_FDS * 4)
                data, ancillary, flags, _ = sock.recvmsg(size, space)
                _descriptors.receive(_fds_of(ancillary, flags))
                view[: len(data)] = data
                n = len(data)
            else:
                n = sock.recv_into(view[got:])
            if n == 0:
                if got == 0 and first:
                    raise EOFError
                raise OSError("got end of file during message")
            got += n
        return buf

    def recv_message(self, maxsize: int | None = None) -> bytearray | None:
        """The next message's bytes, without the copy recv_bytes makes (None when it is
        longer than maxsize). Descriptors that came with it go to this thread's incoming
        list, for the unpickling that follows."""
        _descriptors.start_message()
        while True:
            (size,) = struct.unpack("!i", self._recv_exact(4, first=True))
            if size != _DESCRIPTORS_ONLY:
                break
        if size == -1:
            (size,) = struct.unpack("!Q", self._recv_exact(8, first=False))
        if maxsize is not None and size > maxsize:
            return None
        return self._recv_exact(size, first=False) if size else bytearray()

    def _recv_bytes(self, maxsize=None):
        message = self.recv_message(maxsize)
        return None if message is None else io.BytesIO(message)


def _fds_of(ancillary, flags) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        raise RuntimeError(
            "flambeau.multiprocessing: a message's descriptors were cut off (the process "
            "reached its limit of open files)"
        )
    return list(fds)


def Pipe(duplex: bool = True):
    """Two Connections over a Unix socket pair (both ends can send when `duplex`)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if duplex:
        return Connection(a.detach()), Connection(b.detach())
    return Connection(a.detach(), writable=False), Connection(b.detach(), readable=False)


def _reduce_connection(conn: Connection):
    df = reduction.DupFd(conn.fileno())
    return _rebuild_connection, (df, conn.readable, conn.writable)


def _rebuild_connection(df, readable: bool, writable: bool) -> Connection:
    return Connection(df.detach(), readable, writable)


reduction.register(Connection, _reduce_connection)
