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
