"""MessageReader: several messages per read, descriptors kept until their message."""

from __future__ import annotations

import flambeau
from flambeau.multiprocessing.connection import MessageReader, Pipe


def test_reader_cuts_queued_messages_and_keeps_descriptors():
    a, b = Pipe()
    reader = MessageReader(a)
    t = flambeau.arange(6.0)
    b.send(("first", 1))
    b.send(("tensor", t))  # its segment's descriptor rides on this message
    b.send(("long", b"x" * (3 << 16)))  # longer than the reader's buffer
    assert reader.poll(1.0)
    assert reader.recv() == ("first", 1)
    kind, got = reader.recv()
    assert kind == "tensor"
    got[0] = 42.0
    assert float(t[0]) == 42.0  # the same memory
    assert reader.recv() == ("long", b"x" * (3 << 16))
    assert not reader.poll()
    assert not reader.incoming
    b.close()
    try:
        reader.recv()
    except EOFError:
        pass
    else:
        raise AssertionError("expected EOFError")
    reader.close()
    a.close()


def test_next_nowait_reads_what_has_arrived_without_blocking():
    a, b = Pipe()
    reader = MessageReader(a)
    assert reader.next_nowait() is None  # nothing yet: no blocking
    assert not reader.poll()
    b.send_bytes(b"one")
    b.send_bytes(b"two")
    assert reader.poll()  # one non-blocking read took both
    offset, size = reader.next_nowait()
    assert bytes(reader.buf[offset : offset + size]) == b"one"
    offset, size = reader.next_nowait()  # cut from the buffer, no system call
    assert bytes(reader.buf[offset : offset + size]) == b"two"
    assert reader.next_nowait() is None
    b.send_bytes(b"x" * (3 << 16))  # longer than the buffer: next_message reads it whole
    assert reader.poll(1.0)
    offset, size = reader.next_message()
    assert size == 3 << 16 and bytes(reader.buf[offset : offset + size]) == b"x" * (3 << 16)
    b.close()
    try:
        reader.next_nowait()
    except EOFError:
        pass
    else:
        raise AssertionError("expected EOFError")
    reader.close()
    a.close()
