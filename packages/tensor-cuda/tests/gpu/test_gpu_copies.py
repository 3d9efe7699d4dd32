"""Copies between host and device and within the device keep every byte; pinned memory
and non_blocking copies through the backend's own hooks."""

import numpy as np
import pytest

import flambeau

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


def _host(dtype: str, n: int = 4099) -> flambeau.Tensor:
    raw = np.random.default_rng(0).integers(0, 256, size=n * 8, dtype=np.uint8)
    t = flambeau.from_numpy(raw.copy())
    if dtype == "bool":
        return t[:n] % 2 == 1
    return t.view(getattr(flambeau, dtype))[:n].clone()


@pytest.mark.parametrize("dtype", DTYPES)
def test_host_device_host_round_trip_is_exact(dtype):
    host = _host(dtype)
    dev = host.to("cuda")
    assert dev.device.type == "cuda"
    back = dev.cpu()
    assert back.dtype == host.dtype
    if dtype == "bool":
        assert flambeau.equal(back, host)
    else:
        assert back.view(flambeau.uint8).tolist() == host.view(flambeau.uint8).tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_device_to_device_copy_is_exact(dtype):
    host = _host(dtype)
    dev = host.to("cuda")
    copy = dev.clone()
    assert copy.data_ptr() != dev.data_ptr()
    if dtype == "bool":
        assert flambeau.equal(copy.cpu(), host)
    else:  # bytes, so that NaN payloads count too
        assert copy.cpu().view(flambeau.uint8).tolist() == host.view(flambeau.uint8).tolist()


def test_strided_and_converting_copies_match_the_cpu():
    host = flambeau.arange(2 * 3 * 5, dtype=flambeau.float32).reshape(2, 3, 5)
    dev = host.to("cuda")
    assert flambeau.equal(dev.transpose(0, 2).contiguous().cpu(), host.transpose(0, 2).contiguous())
    assert flambeau.equal(dev[:, 1:, ::2].cpu(), host[:, 1:, ::2])
    assert flambeau.equal(dev.to(flambeau.int64).cpu(), host.to(flambeau.int64))
    assert flambeau.equal(dev.to(flambeau.float16).cpu(), host.to(flambeau.float16))
    assert flambeau.equal(
        dev[0:1].expand(4, 3, 5).contiguous().cpu(), host[0:1].expand(4, 3, 5).contiguous()
    )


@pytest.mark.parametrize("nbytes", [1, 4096, 3 << 20])
def test_pinned_memory_with_non_blocking_copies_round_trips(nbytes):
    import flambeau_cuda

    assert flambeau_cuda._C._selftest_pinned_round_trip(nbytes, 0)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_tensor_pin_memory_and_non_blocking_copies(dtype):
    host = _host(dtype, 3001)
    pinned = host.pin_memory()
    assert pinned.is_pinned() and not host.is_pinned()
    assert flambeau.equal(pinned, host)
    dev = pinned.to("cuda", non_blocking=True)  # ordered on the current stream
    back = flambeau.empty_like(host).pin_memory()
    back.copy_(dev, non_blocking=True)
    flambeau.cuda.current_stream().synchronize()
    assert flambeau.equal(back, host)
    assert flambeau.equal(dev.cpu(), host)  # and a blocking copy into pageable memory


def test_record_stream_keeps_a_block_from_reuse_until_the_stream_is_done():
    side = flambeau.cuda.Stream()
    x = flambeau.ones(1 << 20, device="cuda")
    ptr = x.data_ptr()
    with flambeau.cuda.stream(side):
        y = x * 2  # queued on the side stream, reading x
    x.record_stream(side)
    del x
    z = flambeau.empty(1 << 20, device="cuda")  # must not take x's block while side may run
    assert z.data_ptr() != ptr or side.query()
    side.synchronize()
    assert flambeau.equal(y.cpu(), flambeau.full((1 << 20,), 2.0))


def test_dlpack_round_trip_shares_device_memory():
    dev = _host("float32", 513).to("cuda")
    assert dev.__dlpack_device__() == (2, 0)
    back = flambeau.from_dlpack(dev)
    assert back.device == dev.device and back.data_ptr() == dev.data_ptr()
    back.add_(1.0)
    assert flambeau.equal(dev.cpu(), back.cpu())


def test_ipc_handle_opens_in_another_process():
    # The exporter runs in its own process with expandable segments off (their blocks
    # are not cudaMalloc memory and cannot be shared yet); it starts the importer.
    import os
    import subprocess
    import sys

    importer = (
        "import sys, flambeau_cuda; h = bytes.fromhex(sys.argv[1]);"
        "sys.stdout.write(flambeau_cuda._C._selftest_ipc_import(h, int(sys.argv[2]), 0).hex())"
    )
    exporter = f"""
import subprocess, sys, flambeau_cuda
data = bytes(range(256)) * 64
handle = flambeau_cuda._C._selftest_ipc_export(data, 0)
out = subprocess.run([sys.executable, "-c", {importer!r}, handle.hex(), str(len(data))],
                     capture_output=True, text=True, check=True).stdout
print(bytes.fromhex(out) == data)
"""
    env = dict(os.environ, FLAMBEAU_CUDA_ALLOC_CONF="expandable_segments:False")
    result = subprocess.run(
        [sys.executable, "-c", exporter], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_tensors_cross_processes_through_flambeau_multiprocessing():
    # The child sees the parent's device memory (no copy): it doubles it in place.
    import flambeau.multiprocessing as mp

    ctx = mp.get_context("spawn")
    shared = flambeau.arange(10.0, device="cuda")[2:8]
    queue, done = ctx.Queue(), ctx.Event()
    child = ctx.Process(target=_double_in_child, args=(queue, done))
    child.start()
    queue.put(shared)
    done.wait(60)
    child.join(60)
    assert child.exitcode == 0
    assert flambeau.equal(shared.cpu(), flambeau.arange(2.0, 8.0) * 2)


def _double_in_child(queue, done):
    t = queue.get()
    t.mul_(2)
    flambeau.cuda.synchronize()
    done.set()
