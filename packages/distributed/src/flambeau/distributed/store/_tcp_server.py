"""The server behind TCPStore: one thread that serves every connection with a selector.

The data lives in a KeyValueTable that only this thread touches, so nothing is locked.
A request that must wait (get, wait, multi_get, a blocking queue_pop) parks its
connection with a deadline; every change to the table retries the parked requests in
the order they came, and the loop answers ``timeout`` to those whose deadline passed.
A client that disconnects is forgotten with whatever it was waiting for; a malformed
message closes its connection. Like PyTorch's, the server listens on every address
of the machine (IPv6 and IPv4 where it can), so that clients on other machines reach
it by the master's host name.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import threading
import time

from ..errors import DistNetworkError
from . import _wire
from ._table import KeyValueTable

_LISTENER, _WAKER = object(), object()
_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class _Parked:
    """A request waiting for keys: attempt() returns its reply once it can be answered."""

    __slots__ = ("attempt", "deadline")

    def __init__(self, attempt, deadline: float | None):
        self.attempt, self.deadline = attempt, deadline


class _Connection:
    __slots__ = ("sock", "inbox", "outbox", "parked", "writing", "closed")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.parked: _Parked | None = None
        self.writing = False
        self.closed = False


def _listen(port: int, listen_fd: int | None) -> socket.socket:
    if listen_fd is not None:
        sock = socket.socket(fileno=os.dup(listen_fd))
        sock.listen(1024)
        return sock
    error = None
    if socket.has_dualstack_ipv6():
        try:
            return socket.create_server(
                ("", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=1024
            )
        except OSError as e:
            error = e
    if error is None or error.errno != errno.EADDRINUSE:
        try:
            return socket.create_server(("", port), backlog=1024)
        except OSError as e:
            error = e
    raise DistNetworkError(
        "The server socket has failed to listen on any local network address. "
        f"port: {port}, code: {error.errno}, message: {error.strerror}"
    ) from error


def _timeout_field(field: bytes) -> float | None:
    ms = int(field)
    return None if ms <= 0 else ms / 1000.0


class TCPServer:
    """Listen on `port` (0: a free one; `port` then tells which) or on the bound socket
    `listen_fd`, and serve stores' requests from a daemon thread until close()."""

    def __init__(self, port: int = 0, listen_fd: int | None = None):
        self._listener = _listen(port, listen_fd)
        self.port = self._listener.getsockname()[1]
        self._pid = os.getpid()
        self._table = KeyValueTable()
        self._parked: list[_Connection] = []  # in the order they came
        self._runnable: list[_Connection] = []  # with requests to process
        self._closed = False
        self._waker_r, self._waker_w = socket.socketpair()
        self._listener.setblocking(False)
        self._waker_r.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, _READ, _LISTENER)
        self._selector.register(self._waker_r, _READ, _WAKER)
        self._handlers = {
            b"validate": self._validate,
            b"ping": lambda args: [_wire.OK],
            b"set": self._set,
            b"get": self._get,
            b"add": self._add,
            b"compare_set": self._compare_set,
            b"append": self._append,
            b"multi_get": self._multi_get,
            b"multi_set": self._multi_set,
            b"check": self._check,
            b"wait": self._wait,
            b"delete": self._delete,
            b"num_keys": lambda args: [_wire.OK, str(self._table.num_keys()).encode()],
            b"list_keys": lambda args: [_wire.OK, *(k.encode() for k in self._table.keys())],
            b"queue_push": self._queue_push,
            b"queue_pop": self._queue_pop,
            b"queue_len": self._queue_len,
        }
        self._thread = threading.Thread(
            target=self._serve, name=f"flambeau TCPStore server :{self.port}", daemon=True
        )
        self._thread.start()

    # -- life
    def close(self) -> None:
        """Stop serving and close every socket (at once: the port is free on return)."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._pid:  # a forked child's copy: its thread never ran here
            for s in (self._listener, self._waker_r, self._waker_w):
                s.close()
            return
        try:
            self._waker_w.send(b"x")
        except OSError:
            pass
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)
        self._waker_w.close()

    def _serve(self) -> None:
        try:
            while not self._closed:
                for key, mask in self._selector.select(self._next_deadline_in()):
                    if key.data is _LISTENER:
                        self._accept()
                    elif key.data is _WAKER:
                        self._drain_waker()
                    else:
                        try:
                            self._on_event(key.data, mask)
                        except Exception:  # one connection's trouble ends only it
                            self._drop(key.data)
                self._run_runnable()
                self._expire(time.monotonic())
        finally:
            for key in list(self._selector.get_map().values()):
                key.fileobj.close()
            self._selector.close()

    def _next_deadline_in(self) -> float:
        deadlines = [c.parked.deadline for c in self._parked if c.parked.deadline is not None]
        if not deadlines:
            return 5.0
        return min(max(min(deadlines) - time.monotonic(), 0.0), 5.0)

    def _accept(self) -> None:
        try:
            sock, _ = self._listener.accept()
        except OSError:
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Connection(sock)
        self._selector.register(sock, _READ, conn)

    def _drain_waker(self) -> None:
        try:
            while self._waker_r.recv(4096):
                pass
        except OSError:
            pass

    def _drop(self, conn: _Connection) -> None:
        if conn.closed:
            return
        conn.closed = True
        if conn in self._parked:
            self._parked.remove(conn)
        try:
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    # -- reading and writing
    def _on_event(self, conn: _Connection, mask: int) -> None:
        if mask & _WRITE:
            self._flush(conn)
        if mask & _READ and not conn.closed:
            try:
                data = conn.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return self._drop(conn)
            if not data:
                return self._drop(conn)
            conn.inbox += data
            self._process(conn)

    def _flush(self, conn: _Connection) -> None:
        if conn.outbox:
            try:
                sent = conn.sock.send(conn.outbox)
                del conn.outbox[:sent]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                return self._drop(conn)
        wanted = bool(conn.outbox)
        if wanted != conn.writing:
            conn.writing = wanted
            self._selector.modify(conn.sock, _READ | _WRITE if wanted else _READ, conn)
        if not wanted and conn.inbox:
            self._runnable.append(conn)  # requests held back while the reply was going

    def _reply(self, conn: _Connection, fields) -> None:
        conn.outbox += _wire.encode(fields)
        self._flush(conn)

    def _run_runnable(self) -> None:
        while self._runnable:
            self._process(self._runnable.pop(0))

    def _process(self, conn: _Connection) -> None:
        """Answer the connection's requests in order, stopping at one that waits."""
        while not conn.closed and conn.parked is None and not conn.outbox:
            try:
                fields = _wire.take_message(conn.inbox)
            except _wire.ProtocolError:
                return self._drop(conn)
            if fields is None:
                return
            if not fields:
                return self._drop(conn)
            self._handle(conn, fields)

    def _handle(self, conn: _Connection, fields: list[bytes]) -> None:
        handler = self._handlers.get(fields[0])
        if handler is None:
            return self._reply(conn, [_wire.ERROR, b"unknown operation " + fields[0][:40]])
        try:
            reply = handler(fields[1:])
        except ValueError as e:
            reply = [_wire.VALUE_ERROR, str(e).encode()]
        except (IndexError, TypeError, UnicodeDecodeError) as e:
            reply = [_wire.ERROR, f"malformed {fields[0].decode(errors='replace')}: {e}".encode()]
        except Exception as e:  # a bug here must not end the server for every client
            reply = [_wire.ERROR, f"internal error: {e!r}".encode()]
        if isinstance(reply, _Parked):
            answer = reply.attempt()
            if answer is None:
                conn.parked = reply
                self._parked.append(conn)
                return
            reply = answer
        self._reply(conn, reply)

    # -- waiting
    def _changed(self) -> None:
        """The table changed: answer the parked requests that now can be."""
        for conn in list(self._parked):
            answer = conn.parked.attempt()
            if answer is not None:
                self._parked.remove(conn)
                conn.parked = None
                self._reply(conn, answer)
                if conn.inbox:
                    self._runnable.append(conn)

    def _expire(self, now: float) -> None:
        for conn in list(self._parked):
            deadline = conn.parked.deadline
            if deadline is not None and now >= deadline:
                self._parked.remove(conn)
                conn.parked = None
                self._reply(conn, [_wire.TIMEOUT])
                if conn.inbox:
                    self._runnable.append(conn)

    @staticmethod
    def _park(attempt, timeout_field: bytes) -> _Parked:
        limit = _timeout_field(timeout_field)
        return _Parked(attempt, None if limit is None else time.monotonic() + limit)

    # -- operations (args: the request's fields after its name)
    def _validate(self, args):
        if args[:1] != [_wire.MAGIC]:
            raise TypeError("not a flambeau TCPStore client")
        return [_wire.OK]

    def _set(self, args):
        self._table.set(args[0].decode(), args[1])
        self._changed()
        return [_wire.OK]

    def _get(self, args):
        key = args[1].decode()
        values = self._table.values
        return self._park(lambda: [_wire.OK, values[key]] if key in values else None, args[0])

    def _add(self, args):
        total = self._table.add(args[0].decode(), int(args[1]))
        self._changed()
        return [_wire.OK, str(total).encode()]

    def _compare_set(self, args):
        result = self._table.compare_set(args[0].decode(), args[1], args[2])
        self._changed()
        return [_wire.OK, result]

    def _append(self, args):
        self._table.append(args[0].decode(), args[1])
        self._changed()
        return [_wire.OK]

    def _multi_get(self, args):
        keys = [k.decode() for k in args[1:]]
        table = self._table

        def attempt():
            return [_wire.OK, *(table.values[k] for k in keys)] if table.has_values(keys) else None

        return self._park(attempt, args[0])

    def _multi_set(self, args):
        if len(args) % 2:
            raise TypeError("a key without a value")
        for i in range(0, len(args), 2):
            self._table.set(args[i].decode(), args[i + 1])
        self._changed()
        return [_wire.OK]

    def _check(self, args):
        return [_wire.OK, b"1" if self._table.has_all(k.decode() for k in args) else b"0"]

    def _wait(self, args):
        keys = [k.decode() for k in args[1:]]
        table = self._table
        return self._park(lambda: [_wire.OK] if table.has_all(keys) else None, args[0])

    def _delete(self, args):
        return [_wire.OK, b"1" if self._table.delete(args[0].decode()) else b"0"]

    def _queue_push(self, args):
        self._table.queue_push(args[0].decode(), args[1])
        self._changed()
        return [_wire.OK]

    def _queue_pop(self, args):
        block, key = args[1] == b"1", args[2].decode()
        table = self._table

        def attempt():
            value = table.queue_pop(key)
            return None if value is None else [_wire.OK, value]

        if not block:
            return attempt() or [_wire.QUEUE_EMPTY]
        return self._park(attempt, args[0])

    def _queue_len(self, args):
        return [_wire.OK, str(self._table.queue_len(args[0].decode())).encode()]
