"""The key-value stores of torch.distributed: Store, HashStore, FileStore, TCPStore and
PrefixStore, in pure Python (sockets, threads, flock). Re-exported by
flambeau.distributed; importing them starts nothing and initializes no MPI."""

from ._base import Store
from ._file import FileStore
from ._hash import HashStore
from ._prefix import PrefixStore
from ._tcp import TCPStore

__all__ = ["FileStore", "HashStore", "PrefixStore", "Store", "TCPStore"]
