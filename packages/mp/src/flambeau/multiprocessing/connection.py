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
from multiprocessing.reduction import ForkingPickler as _ForkingPickler

from flambeau.multiprocessing import _descriptors

_MAX_FDS = 253  # the kernel's SCM_MAX_FD
_DESCRIPTORS_ONLY = -2  # a length that announces descriptors, then the real header
_ANC_SPACE = socket.CMSG_SPACE(_MAX_FDS * 4)
_MSG_CTRUNC = int(socket.MSG_CTRUNC)
_MSG_DONTWAIT = int(socket.MSG_DONTWAIT)  # a plain int: `&` with the enum goes through Python
_SCM_RIGHTS = int(socket.SCM_RIGHTS)
_SOL_SOCKET = int(socket.SOL_SOCKET)
_I = struct.Struct("!i")
_Q = struct.Struct("!Q")


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
        nseg = len(segments)
        for i in range(0, nseg - _MAX_FDS, _MAX_FDS):
            # More segments than one message may carry: headers of descriptors only.
            fds = array.array("i", [s.fd for s in segments[i : i + _MAX_FDS]])
            self._sendmsg_all(
                sock, [struct.pack("!i", _DESCRIPTORS_ONLY)], 4,
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)],
            )  # fmt: skip
        last = segments[(nseg - 1) // _MAX_FDS * _MAX_FDS :] if nseg else ()
        # The header and the body go out in one system call (one wake-up of the reader,
        # one socket buffer); the last descriptors ride on it.
        ancillary = (
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fd for s in last]))]
            if last
            else []
        )
        self._sendmsg_all(sock, [header, buf] if n else [header], len(header) + n, ancillary)
        del segments  # held until the kernel has its own references to the descriptors

    @staticmethod
    def _sendmsg_all(sock, parts: list, total: int, ancillary) -> None:
        sent = sock.sendmsg(parts, ancillary)
        if sent < total:
            # The rest, without descriptors (they went with the first byte).
            for p in parts:
                p = memoryview(p).cast("B")
                if sent >= len(p):
                    sent -= len(p)
                    continue
                sock.sendall(p[sent:])
                sent = 0

    def _recv_exact(self, size: int, first: bool):
        """`size` bytes; descriptors that arrive with them go to the incoming list."""
        sock = self._socket()
        buf = bytearray(size)
        n, ancillary, flags, _ = sock.recvmsg_into([buf], _ANC_SPACE)
        if ancillary:
            _descriptors.receive(_fds_of(ancillary, flags))
        if n < size:
            if n == 0:
                if first:
                    raise EOFError
                raise OSError("got end of file during message")
            view = memoryview(buf)
            got = n
            while got < size:
                n = sock.recv_into(view[got:])
                if n == 0:
                    raise OSError("got end of file during message")
                got += n
        return buf

    def recv_message(self, maxsize: int | None = None) -> bytearray | None:
        """The next message's bytes, without the copy recv_bytes makes (None when it is
        longer than maxsize). Descriptors that came with it go to this thread's incoming
        list, for the unpickling that follows."""
        _descriptors.start_message()
        while True:
            (size,) = _I.unpack(self._recv_exact(4, first=True))
            if size != _DESCRIPTORS_ONLY:
                break
        if size == -1:
            (size,) = _Q.unpack(self._recv_exact(8, first=False))
        if maxsize is not None and size > maxsize:
            return None
        return self._recv_exact(size, first=False) if size else bytearray()

    def _recv_bytes(self, maxsize=None):
        message = self.recv_message(maxsize)
        return None if message is None else io.BytesIO(message)


class MessageReader:
    """Reads the messages of a Connection that has no other reader, several per system
    call: one ``recvmsg_into`` fills a buffer with whatever has arrived, and messages are
    cut from it (a DataLoader's main process reads its workers' results this way).

    Descriptors are kept by the segment they open until the message that needs them is
    unpickled (`recv_bytes` hands them to this thread's incoming list): the kernel gives
    a message's descriptors no later than its first bytes, in the read that reaches
    them, so a read may bring those of a message still in the buffer. They are closed,
    when unused, once the buffer holds no further message.
    """

    _SIZE = 1 << 16

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.sock = conn._socket()
        self.buf = bytearray(self._SIZE)
        self.start = 0  # the unread bytes are buf[start:end]
        self.end = 0
        self.incoming: dict = {}  # segment key -> descriptor, not yet used
        self._poller = None

    def buffered(self) -> bool:
        """Whether a whole message is in the buffer (no system call)."""
        avail = self.end - self.start
        if avail < 4:
            return False
        (size,) = _I.unpack_from(self.buf, self.start)
        if size >= 0:
            return avail >= 4 + size
        return True  # a descriptors-only header, or a long one: let next_message read on

    def poll(self, timeout: float = 0.0) -> bool:
        """Whether a message (or the end of the connection) can be read. With no timeout
        it tries one non-blocking read instead of asking the kernel first: a message
        that has arrived costs one system call, read and all."""
        if self.buffered():
            return True
        if timeout <= 0:
            try:
                return self._read(_MSG_DONTWAIT) >= 0
            except BlockingIOError:
                return False
        if self._poller is None:
            import select

            self._poller = select.poll()
            self._poller.register(self.sock.fileno(), select.POLLIN)
        return bool(self._poller.poll(max(0, int(timeout * 1000))))

    def _read(self, flags: int = 0) -> int:
        """One read into the buffer's free end (made room for first): the bytes read, 0 at
        the end of the connection, -1 when there was no room (a message longer than the
        buffer is half read: `_fill` grows it)."""
        buf = self.buf
        if self.start == self.end:
            self.start = self.end = 0
            if len(buf) > self._SIZE:
                self.buf = buf = bytearray(self._SIZE)  # after a long message
        elif len(buf) - self.end < 4096:
            rest = self.end - self.start
            buf[:rest] = buf[self.start : self.end]
            self.start, self.end = 0, rest
        if self.end == len(buf):
            return -1
        with memoryview(buf) as view:
            n, ancillary, got_flags, _ = self.sock.recvmsg_into(
                [view[self.end :]], _ANC_SPACE, flags
            )
        if ancillary:
            self._keep(_fds_of(ancillary, got_flags))
        self.end += n
        return n

    def _fill(self, need: int) -> None:
        """Reads until `need` unread bytes are buffered (blocking)."""
        buf = self.buf
        if self.start == self.end:
            self.start = self.end = 0
            if len(buf) > self._SIZE:
                self.buf = buf = bytearray(self._SIZE)  # after a long message
        if self.start + need > len(buf):
            rest = self.end - self.start
            if need > len(buf):
                grown = bytearray(max(need, 2 * len(buf)))
                grown[:rest] = buf[self.start : self.end]
                self.buf = buf = grown
            else:
                buf[:rest] = buf[self.start : self.end]
            self.start, self.end = 0, rest
        while self.end - self.start < need:
            with memoryview(buf) as view:
                n, ancillary, flags, _ = self.sock.recvmsg_into([view[self.end :]], _ANC_SPACE)
            if ancillary:
                self._keep(_fds_of(ancillary, flags))
            if n == 0:
                if self.end == self.start:
                    raise EOFError
                raise OSError("got end of file during message")
            self.end += n

    def _keep(self, fds) -> None:
        _descriptors.keep(fds, self.incoming)

    def next_message(self) -> tuple[int, int]:
        """(offset, size) in `buf` of the next message's body, read from the connection
        as needed (blocking); valid until the next call."""
        while True:
            self._fill(4)
            (size,) = _I.unpack_from(self.buf, self.start)
            if size == _DESCRIPTORS_ONLY:
                self.start += 4
                continue
            header = 4
            if size == -1:
                self._fill(12)
                (size,) = _Q.unpack_from(self.buf, self.start + 4)
                header = 12
            self._fill(header + size)
            offset = self.start + header
            self.start = offset + size
            return offset, size

    def next_nowait(self) -> tuple[int, int] | None:
        """Like `next_message`, but None instead of blocking when no whole message has
        arrived: one non-blocking read when none is buffered. A message that has
        arrived costs one system call, read and all; the end of the connection raises
        EOFError (OSError within a message)."""
        start = self.start
        avail = self.end - start
        if avail >= 4:
            (size,) = _I.unpack_from(self.buf, start)
            if 0 <= size <= avail - 4:
                self.start = start + 4 + size
                return start + 4, size
        try:
            n = self._read(_MSG_DONTWAIT)
        except BlockingIOError:
            return None
        if n == 0 or self.buffered():
            return self.next_message()  # EOF raises; a descriptors-only header is skipped
        return None

    def loads(self, load, data):
        """``load(data)`` (an unpickling of the message just cut) with the descriptors
        received so far as this thread's incoming ones; it takes those it needs."""
        previous = _descriptors.swap_incoming(self.incoming)
        try:
            return load(data)
        finally:
            _descriptors.swap_incoming(previous)

    def release_descriptors(self) -> None:
        """Closes the unused descriptors once no unread bytes remain (every message they
        came with has been read)."""
        if self.start == self.end and self.incoming:
            for fd in self.incoming.values():
                os.close(fd)
            self.incoming.clear()

    def recv(self):
        """The next message, unpickled (multiprocessing's pickler)."""
        offset, size = self.next_message()
        with memoryview(self.buf) as view:
            data = bytes(view[offset : offset + size])
        try:
            return self.loads(_ForkingPickler.loads, data)
        finally:
            self.release_descriptors()

    def close(self) -> None:
        for fd in self.incoming.values():
            os.close(fd)
        self.incoming.clear()


def _fds_of(ancillary, flags) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == _SOL_SOCKET and kind == _SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if flags & _MSG_CTRUNC:
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
