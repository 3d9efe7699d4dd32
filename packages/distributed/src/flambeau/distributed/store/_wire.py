"""The TCPStore protocol: length-prefixed messages of length-prefixed fields.

A message is a 4-byte big-endian length and that many bytes: its fields, each a 4-byte
big-endian length and its bytes. A request's first field names the operation, a
reply's first field its status (``ok``, ``timeout``, ``value_error``, ``queue_empty``,
``error``). Each connection carries one request at a time: a client sends one, then
reads its reply.
"""

from __future__ import annotations

import socket
import struct

from ..errors import DistNetworkError

LENGTH = struct.Struct("!I")
MAX_MESSAGE = 1 << 31  # a value of up to 2 GiB
MAGIC = b"flambeau-store-1"  # what a client and server say first, to know each other

OK = b"ok"
TIMEOUT = b"timeout"
VALUE_ERROR = b"value_error"
QUEUE_EMPTY = b"queue_empty"
ERROR = b"error"


class ProtocolError(ValueError):
    """A malformed message: the connection is closed."""


def encode(fields) -> bytes:
    parts = []
    for f in fields:
        parts.append(LENGTH.pack(len(f)))
        parts.append(f)
    body = b"".join(parts)
    if len(body) >= MAX_MESSAGE:
        raise ValueError(f"a TCPStore message is limited to 2 GiB, this one has {len(body)} bytes")
    return LENGTH.pack(len(body)) + body


def decode(body) -> list[bytes]:
    fields, offset, view = [], 0, memoryview(body)
    while offset < len(view):
        if offset + 4 > len(view):
            raise ProtocolError("truncated field length")
        (n,) = LENGTH.unpack_from(view, offset)
        offset += 4
        if offset + n > len(view):
            raise ProtocolError("field longer than its message")
        fields.append(bytes(view[offset : offset + n]))
        offset += n
    return fields


def take_message(buffer: bytearray) -> list[bytes] | None:
    """Remove the first whole message from `buffer` and return its fields (None when
    the buffer holds no whole message yet)."""
    if len(buffer) < 4:
        return None
    (n,) = LENGTH.unpack_from(buffer, 0)
    if n >= MAX_MESSAGE:
        raise ProtocolError(f"message of {n} bytes")
    if len(buffer) < 4 + n:
        return None
    fields = decode(buffer[4 : 4 + n])
    del buffer[: 4 + n]
    return fields


def _receive_exactly(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise DistNetworkError(
                "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote "
                "server shutdown or crash?"
            )
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket) -> list[bytes]:
    """Read one whole message from the blocking socket `sock`."""
    (n,) = LENGTH.unpack(_receive_exactly(sock, 4))
    if n >= MAX_MESSAGE:
        raise DistNetworkError(f"TCPStore: malformed reply ({n} bytes)")
    try:
        return decode(_receive_exactly(sock, n))
    except ProtocolError as e:
        raise DistNetworkError(f"TCPStore: malformed reply ({e})") from None
