"""The segment descriptors that travel with one message, per thread.

Pickling a shared tensor records its segment in `outgoing`; the next send on the thread
(connection.py) attaches the descriptors of every recorded segment. Receiving a message
puts its descriptors in `incoming`, keyed by the segment they open, for the unpickling
that follows on the same thread; descriptors of segments this process maps already are
closed at once, and a message's unused ones at the next message.
"""

from __future__ import annotations

import os
import threading

from flambeau import _shared_memory

_local = threading.local()


def record_outgoing(segment) -> None:
    """The message being pickled on this thread needs `segment`."""
    out = getattr(_local, "outgoing", None)
    if out is None:
        out = _local.outgoing = {}
    out[segment.key] = segment


def take_outgoing() -> list:
    """The segments recorded since the last send on this thread (kept open by the list)."""
    out = getattr(_local, "outgoing", None)
    if not out:
        return []
    _local.outgoing = {}
    return list(out.values())


def start_message() -> None:
    """Closes what the previous message on this thread received and did not use."""
    for fd in getattr(_local, "incoming", {}).values():
        os.close(fd)
    _local.incoming = {}


def receive(fds: list[int]) -> None:
    incoming = getattr(_local, "incoming", None)
    if incoming is None:
        incoming = _local.incoming = {}
    keep(fds, incoming)


def keep(fds: list[int], incoming: dict) -> None:
    """Keeps in `incoming`, by segment, the descriptors of segments neither mapped in this
    process nor kept already; closes the others."""
    for fd in fds:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key in _shared_memory._segments or key in incoming:
            os.close(fd)
        else:
            incoming[key] = fd


def take_incoming(key) -> int | None:
    """The descriptor of segment `key` that arrived with this message, if one did."""
    incoming = getattr(_local, "incoming", None)
    return incoming.pop(key, None) if incoming else None


def swap_incoming(incoming: dict) -> dict:
    """Makes `incoming` (segment key -> descriptor, kept by a reader) this thread's
    incoming descriptors, and returns the ones it replaces, untouched."""
    previous = getattr(_local, "incoming", None)
    _local.incoming = incoming
    return previous if previous is not None else {}
