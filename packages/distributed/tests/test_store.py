"""The key-value stores in one process: every store's semantics (PyTorch's, as measured
on torch 2.13), timeouts, PrefixStore, and what is particular to FileStore and TCPStore."""

import gc
import os
import socket
import struct
import threading
import time
from datetime import timedelta

import pytest

import flambeau.distributed as dist

SHORT = timedelta(seconds=0.15)


@pytest.fixture(params=["hash", "file", "tcp", "prefix"])
def store(request, tmp_path):
    if request.param == "hash":
        s = dist.HashStore()
    elif request.param == "file":
        s = dist.FileStore(str(tmp_path / "store"), 1)
    elif request.param == "tcp":
        s = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=30))
    else:
        s = dist.PrefixStore("pre", dist.HashStore())
    s.kind = request.param
    yield s
    del s
    gc.collect()


def test_set_get_bytes_and_str(store):
    store.set("a", "x")
    store.set("b", b"\xff\x00")
    store.set("c", bytearray(b"q"))
    store.set(b"k", "v")  # a bytes key is read as UTF-8
    assert store.get("a") == b"x" and store.get("b") == b"\xff\x00" and store.get("c") == b"q"
    assert store.get("k") == b"v"
    store.set("a", "replaced")
    assert store.get("a") == b"replaced"
    store.set("", "empty key")
    assert store.get("") == b"empty key"
    with pytest.raises(TypeError):
        store.set("x", 5)
    with pytest.raises(TypeError):
        store.set("x", None)


def test_add_is_a_counter(store):
    assert store.add("n", 3) == 3
    assert store.add("n", -1) == 2
    assert store.get("n") == b"2"
    assert store.add("zero", 0) == 0 and store.check(["zero"])
    store.set("ten", "10")
    assert store.add("ten", 1) == 11
    store.set("text", "abc")
    with pytest.raises(ValueError, match="text' is not an integer"):
        store.add("text", 1)
    with pytest.raises(TypeError):
        store.add("n", 1.5)


def test_compare_set(store):
    assert store.compare_set("m1", "", "d") == b"d"  # missing, expected empty: set
    assert store.get("m1") == b"d"
    assert store.compare_set("m2", "e", "d") == b"e"  # missing, expected given: not set
    assert not store.check(["m2"])
    store.set("a", "x")
    assert store.compare_set("a", "x", "y") == b"y"  # match: set
    assert store.compare_set("a", "zz", "w") == b"y"  # no match: the current value
    assert store.compare_set("a", "", "w") == b"y"  # exists, expected empty: no match
    assert store.get("a") == b"y"


def test_check_wait_and_timeouts(store):
    store.set("a", "1")
    assert store.check(["a"]) and store.check([]) and not store.check(["a", "nope"])
    store.wait(["a"])
    store.wait([])
    store.set_timeout(SHORT)
    assert store.timeout == SHORT
    for call in (
        lambda: store.get("missing"),
        lambda: store.wait(["missing"]),
        lambda: store.wait(["a", "missing"], timedelta(seconds=0.1)),
        lambda: store.multi_get(["a", "missing"]),
    ):
        start = time.monotonic()
        with pytest.raises(dist.DistStoreError, match="missing") as info:
            call()
        assert isinstance(info.value, RuntimeError)  # PyTorch's type is a RuntimeError
        assert time.monotonic() - start < 3
    with pytest.raises(TypeError):
        store.set_timeout(5)


def test_wait_wakes_when_another_thread_sets(store):
    store.set_timeout(timedelta(seconds=10))
    # A TCPStore's call holds its connection, as PyTorch's: other threads use a clone.
    timer = threading.Timer(0.1, store.clone().set, args=("later", "v"))
    timer.start()
    start = time.monotonic()
    assert store.get("later") == b"v"
    assert time.monotonic() - start < 5
    timer.join()


def test_extended_api(store):
    store.append("ap", "po")
    store.append("ap", b"tato")
    assert store.get("ap") == b"potato"
    store.multi_set(["m", "n"], ["1", b"2"])
    assert store.multi_get(["m", "n"]) == [b"1", b"2"] and store.multi_get([]) == []
    with pytest.raises(dist.DistStoreError, match="same size"):
        store.multi_set(["m"], ["1", "2"])
    assert store.has_extended_api() == (store.kind != "file")


def test_delete_num_and_list_keys(store):
    own = {"hash": 0, "file": 1, "tcp": 1, "prefix": 0}[store.kind]  # bookkeeping keys
    assert store.num_keys() == own and store.list_keys() == []
    store.set("a", "1")
    store.add("b", 1)
    assert store.num_keys() == own + 2
    assert sorted(store.list_keys()) == ["a", "b"]
    assert store.delete_key("a") is True
    assert store.delete_key("a") is False
    assert not store.check(["a"]) and store.num_keys() == own + 1


def test_barrier(store):
    store.barrier("bar", 1)
    store.barrier("bar2", 1, timedelta(seconds=5))
    assert store.check(["bar/num_members", "bar/last_member"])
    with pytest.raises(dist.DistStoreError):
        store.barrier("lonely", 2, timedelta(seconds=0.1))


def test_queues(store):
    if store.kind == "file":  # PyTorch's FileStore has none either
        with pytest.raises(NotImplementedError):
            store.queue_push("q", "x")
        return
    store.set_timeout(SHORT)
    assert store.queue_len("q") == 0 and not store.check(["q"])
    store.queue_push("q", "one")
    store.queue_push("q", b"two")
    assert store.queue_len("q") == 2 and store.check(["q"])
    store.wait(["q"])
    assert store.queue_pop("q") == b"one"
    assert store.queue_pop("q", False) == b"two"
    with pytest.raises(dist.QueueEmptyError, match="queue is empty"):
        store.queue_pop("q", block=False)
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
    with pytest.raises(dist.DistStoreError):
        store.queue_pop("q")  # blocks until the store's timeout
    assert not store.check(["q"])


def test_queue_pop_wakes_for_a_push(store):
    if store.kind == "file":
        return
    store.set_timeout(timedelta(seconds=10))
    threading.Timer(0.1, store.clone().queue_push, args=("jobs", "work")).start()
    assert store.queue_pop("jobs") == b"work"


def test_clone_shares_the_data(store):
    other = store.clone()
    other.set("from clone", "1")
    assert store.get("from clone") == b"1"


def test_threads_add_exactly(store):
    def work():
        s = store.clone()
        for _ in range(50):
            s.add("count", 1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert store.get("count") == b"200"


def test_prefix_store_isolation_and_views():
    base = dist.HashStore()
    a, b = dist.PrefixStore("a", base), dist.PrefixStore("b", base)
    a.set("k", "from a")
    b.set("k", "from b")
    assert a.get("k") == b"from a" and b.get("k") == b"from b"
    assert base.get("a/k") == b"from a"
    assert a.add("n", 2) == 2 and not b.check(["n"])
    nested = dist.PrefixStore("x", a)
    nested.set("deep", "1")
    assert base.get("a/x/deep") == b"1"
    assert sorted(a.list_keys()) == ["k", "n", "x/deep"] and nested.list_keys() == ["deep"]
    assert a.num_keys() == base.num_keys() == 4  # the whole store, as PyTorch
    assert nested.underlying_store is a and nested._underlying_non_prefix_store is base
    a.set_timeout(timedelta(seconds=3))
    assert base.timeout == timedelta(seconds=3) == b.timeout
    with pytest.raises(ValueError, match="cannot be None"):
        dist.PrefixStore("p", None)
    with pytest.raises(TypeError):
        dist.PrefixStore(1, base)


def test_store_subclass_in_python():
    class DictStore(dist.Store):
        def __init__(self):
            super().__init__()
            self.data = {}

        def set(self, key, value):
            self.data[key] = value.encode() if isinstance(value, str) else value

        def get(self, key):
            return self.data[key]

    s = DictStore()
    p = dist.PrefixStore("p", s)
    p.set("z", "v")
    assert s.data == {"p/z": b"v"} and p.get("z") == b"v"
    s.multi_set(["a"], ["1"])
    assert s.multi_get(["a"]) == [b"1"]
    assert s.timeout == timedelta(seconds=300) and not s.has_extended_api()
    with pytest.raises(RuntimeError):  # NotImplementedError, a RuntimeError as PyTorch's
        s.add("n", 1)
    with pytest.raises(NotImplementedError):
        dist.Store().num_keys()


# -- FileStore


def test_file_store_removes_its_file_after_world_size_users(tmp_path):
    path = str(tmp_path / "f")
    a, b = dist.FileStore(path, 2), dist.FileStore(path, 2)
    a.set("k", "v")
    assert b.get("k") == b"v" and a.path == path
    del a
    gc.collect()
    assert os.path.exists(path)
    del b
    gc.collect()
    assert not os.path.exists(path)
    fresh = dist.FileStore(path, 2)  # the path can be used again from scratch
    assert not fresh.check(["k"]) and fresh.num_keys() == 1


def test_file_store_without_world_size_keeps_its_file(tmp_path):
    path = str(tmp_path / "f")
    s = dist.FileStore(path)
    s.set("a", "b")
    del s
    gc.collect()
    assert os.path.exists(path)
    assert dist.FileStore(path).get("a") == b"b"


def test_file_store_clone_counts_as_a_user(tmp_path):
    path = str(tmp_path / "f")
    s = dist.FileStore(path, 1)
    c = s.clone()
    del s
    gc.collect()
    assert os.path.exists(path)
    del c
    gc.collect()
    assert not os.path.exists(path)


def test_file_store_survives_its_file_being_replaced(tmp_path):
    path = str(tmp_path / "f")
    s = dist.FileStore(path, 1)
    s.set("old", "1")
    os.remove(path)
    s.set("new", "2")
    assert s.get("new") == b"2" and not s.check(["old"])


def test_file_store_in_a_missing_directory_raises_at_once(tmp_path):
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="cannot open"):
        dist.FileStore(str(tmp_path / "no" / "such" / "dir"), 1)
    assert time.monotonic() - start < 2


def test_file_store_reads_and_writes_pytorchs_format(tmp_path):
    torch_dist = pytest.importorskip("torch.distributed")
    path = str(tmp_path / "f")
    theirs, ours = torch_dist.FileStore(path, 2), dist.FileStore(path, 2)
    theirs.set("a", "from torch")
    ours.set("b", "from flambeau")
    assert ours.get("a") == b"from torch" and theirs.get("b") == b"from flambeau"
    assert theirs.add("n", 2) == 2 and ours.add("n", 3) == 5 and theirs.add("n", 0) == 5
    assert ours.delete_key("a") and not theirs.check(["a"])
    del theirs, ours
    gc.collect()
    assert not os.path.exists(path)


# -- TCPStore


def test_tcp_store_port_zero_and_attributes():
    server = dist.TCPStore("127.0.0.1", 0, is_master=True)
    assert 0 < server.port < 65536 and server.host == "127.0.0.1"
    assert server.timeout == timedelta(seconds=300) and server.libuvBackend is True
    assert server.num_keys() == 0  # no world_size: no init/ counter
    client = dist.TCPStore("localhost", server.port, use_libuv=False)
    assert client.libuvBackend is False and client.port == server.port
    client.set("k", "v")
    assert server.get("k") == b"v"


def test_tcp_store_argument_checks():
    with pytest.raises(ValueError, match="cannot be 0"):
        dist.TCPStore("127.0.0.1", 0, 0, True)
    with pytest.raises(TypeError):
        dist.TCPStore("127.0.0.1", -1, None, True)
    with pytest.raises(TypeError):
        dist.TCPStore("127.0.0.1", 0, None, True, 5)
    dist.TCPStore("127.0.0.1", 0, -1, True)  # a negative world size: not fixed


def test_tcp_store_master_waits_for_workers_until_its_timeout():
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=0.3))
    assert time.monotonic() - start < 3


def test_tcp_store_workers_join_the_master():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    joined = []
    clients = [
        threading.Thread(
            target=lambda: joined.append(
                dist.TCPStore("127.0.0.1", port, 3, timeout=timedelta(seconds=20))
            )
        )
        for _ in range(2)
    ]
    for t in clients:  # before the master exists: they retry connecting
        t.start()
    time.sleep(0.1)
    master = dist.TCPStore(
        "127.0.0.1", port, 3, True, timedelta(seconds=20), master_listen_fd=listener.fileno()
    )
    for t in clients:
        t.join(20)
    assert len(joined) == 2 and master.num_keys() == 1  # the init/ counter, as PyTorch
    joined[0].set("x", "1")
    assert master.get("x") == b"1" and master.list_keys() == ["x"]
    listener.close()


def test_tcp_store_client_without_server_times_out():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(dist.DistNetworkError, match="timed out"):
        dist.TCPStore("127.0.0.1", port, timeout=timedelta(seconds=0.3))
    assert time.monotonic() - start < 3


def test_tcp_store_port_in_use():
    server = dist.TCPStore("127.0.0.1", 0, is_master=True)
    with pytest.raises(dist.DistNetworkError, match="in use"):
        dist.TCPStore("127.0.0.1", server.port, is_master=True)
    with pytest.raises(dist.DistNetworkError):
        dist.TCPStore("127.0.0.1", server.port, is_master=True, multi_tenant=True)


def test_tcp_store_multi_tenant_masters_share_one_server():
    first = dist.TCPStore("127.0.0.1", 0, is_master=True, multi_tenant=True)
    second = dist.TCPStore("127.0.0.1", first.port, is_master=True, multi_tenant=True)
    second.set("k", "v")
    assert first.get("k") == b"v"
    port = first.port
    del first
    gc.collect()
    assert second.get("k") == b"v"  # the server lives while a tenant does
    del second
    gc.collect()
    with pytest.raises(dist.DistNetworkError):
        dist.TCPStore("127.0.0.1", port, timeout=timedelta(seconds=0.2))


def test_tcp_store_client_after_master_is_gone():
    master = dist.TCPStore("127.0.0.1", 0, is_master=True)
    client = dist.TCPStore("127.0.0.1", master.port)
    client.set("x", "1")
    del master
    gc.collect()
    start = time.monotonic()
    for _ in range(2):  # the lost connection, then the failed reconnection
        with pytest.raises(dist.DistNetworkError):
            client.get("x")
    assert time.monotonic() - start < 3


def test_tcp_store_waits_are_answered_by_the_server():
    master = dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=10))
    client = dist.TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=10))
    threading.Timer(0.2, master.set, args=("k", "v")).start()
    assert client.multi_get(["k"]) == [b"v"]
    with pytest.raises(dist.DistStoreError, match="wait timeout after 100ms, keys: nope"):
        client.wait(["nope"], timedelta(seconds=0.1))
    client.set("after", "ok")  # the connection is still in step
    assert master.get("after") == b"ok"


def _raw(port):
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def test_tcp_server_survives_bad_and_vanishing_clients():
    master = dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=10))
    garbage = _raw(master.port)
    garbage.sendall(struct.pack("!I", 12) + b"\xff" * 12)  # fields longer than the message
    garbage.settimeout(5)
    assert garbage.recv(100) == b""  # closed by the server
    garbage.close()
    huge = _raw(master.port)
    huge.sendall(struct.pack("!I", 0xFFFFFFFF))  # a length past the limit
    assert huge.recv(100) == b""
    huge.close()
    gone = _raw(master.port)  # a client that leaves in the middle of a wait
    msg = b"".join(struct.pack("!I", len(f)) + f for f in (b"wait", b"0", b"/never"))
    gone.sendall(struct.pack("!I", len(msg)) + msg)
    time.sleep(0.1)
    gone.close()
    master.set("still", "serving")
    other = dist.TCPStore("127.0.0.1", master.port)
    assert other.get("still") == b"serving"


def test_tcp_store_server_thread_ends_with_the_master():
    before = {t.name for t in threading.enumerate()}
    master = dist.TCPStore("127.0.0.1", 0, is_master=True)
    name = f"flambeau TCPStore server :{master.port}"
    assert name in {t.name for t in threading.enumerate()} - before
    del master
    gc.collect()
    assert name not in {t.name for t in threading.enumerate()}
