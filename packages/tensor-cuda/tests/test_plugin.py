"""The plugin on a machine without a GPU (or without a driver): it builds, imports, says
CUDA is unavailable and why, refuses device work with PyTorch's errors, and guards forks.

The package is built once per test session (conftest.py's ``install_dir``;
``$FLAMBEAU_CUDA_BUILD_DIR`` keeps the build between runs) and each check runs in
a fresh interpreter with the install directory on ``sys.path``, as an installed plugin
would be found. Skipped, with the reason, without nvcc, CMake, scikit-build-core or
pybind11, or when the importable core is older than the plugin's headers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

NO_DEVICE_REASONS = ("Found no NVIDIA driver on your system", "No CUDA GPUs are available")


def run(install_dir, code: str) -> dict:
    """Runs `code` in a fresh interpreter that finds the plugin; returns the JSON it prints
    last."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(install_dir), *sys.path])
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def cuda_kernels(install_dir) -> set[str]:
    """The operators that have a kernel for cuda once the plugin is imported (no GPU
    needed): what the registration tests check their kernel lists against."""
    return set(
        run(
            install_dir,
            """
            import json
            import flambeau, flambeau_cuda
            print(json.dumps(sorted(flambeau._C._operators_with_kernel("cuda"))))
        """,
        )
    )


@pytest.fixture(scope="module")
def gpu_present(install_dir):
    return run(
        install_dir,
        """
        import json, flambeau
        print(json.dumps(flambeau.cuda.is_available()))
    """,
    )


@pytest.fixture
def no_gpu(gpu_present):
    if gpu_present:
        pytest.skip("a CUDA device is available here: tests/gpu covers it")


def test_import_registers_the_backend_without_touching_a_driver(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, time
        import flambeau
        start = time.perf_counter()
        available = flambeau.cuda.is_available()
        seconds = time.perf_counter() - start
        import flambeau_cuda
        info = [b for b in flambeau.backends.available() if b.name == "cuda"][0]
        print(json.dumps({
            "available": available, "count": flambeau.cuda.device_count(),
            "seconds": seconds, "status": info.status, "dist": info.distribution,
            "initialized": flambeau.cuda.is_initialized(),
            "reason": flambeau_cuda._unavailable_reason(),
            "same_module": flambeau.cuda.memory_allocated is flambeau_cuda.memory_allocated,
        }))
    """,
    )
    assert out["available"] is False and out["count"] == 0
    assert out["status"] == "loaded" and out["dist"] == "flambeau-tensor-cuda"
    assert out["initialized"] is False
    assert out["reason"].startswith(NO_DEVICE_REASONS)
    assert out["same_module"]
    # The issue asks < 200 ms for the plugin's import and is_available; a loaded shared
    # machine gets slack.
    assert out["seconds"] < 1.0, out


def test_cuda_tensor_raises_naming_the_reason(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, flambeau
        try:
            flambeau.zeros(2, device="cuda")
            print(json.dumps(None))
        except RuntimeError as e:
            print(json.dumps(str(e)))
    """,
    )
    assert out is not None and any(r in out for r in NO_DEVICE_REASONS), out


def test_functions_that_need_a_device_raise_pytorchs_error(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, flambeau
        cuda = flambeau.cuda
        calls = {
            "current_device": lambda: cuda.current_device(),
            "set_device": lambda: cuda.set_device(0),
            "device": lambda: cuda.device(0).__enter__(),
            "synchronize": lambda: cuda.synchronize(),
            "get_device_properties": lambda: cuda.get_device_properties(0),
            "get_device_name": lambda: cuda.get_device_name(),
            "get_device_capability": lambda: cuda.get_device_capability(),
            "mem_get_info": lambda: cuda.mem_get_info(),
            "init": lambda: cuda.init(),
            "Stream": lambda: cuda.Stream(),
            "current_stream": lambda: cuda.current_stream(),
            "Event.record": lambda: cuda.Event().record(),
            "set_per_process_memory_fraction": lambda: cuda.set_per_process_memory_fraction(0.5),
        }
        result = {}
        for name, call in calls.items():
            try:
                call()
                result[name] = None
            except RuntimeError as e:
                result[name] = str(e)
        print(json.dumps(result))
    """,
    )
    for name, message in out.items():
        assert message is not None and message.startswith(NO_DEVICE_REASONS), (name, message)


def test_counters_and_seeding_answer_without_a_device(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, flambeau
        cuda = flambeau.cuda
        cuda.empty_cache()
        cuda.reset_peak_memory_stats()
        cuda.manual_seed(1234)
        state = cuda.get_rng_state()
        cuda.manual_seed_all(5)
        cuda.set_rng_state(state)
        print(json.dumps({
            "counters": [cuda.memory_allocated(), cuda.max_memory_allocated(),
                         cuda.memory_reserved(), cuda.max_memory_reserved()],
            "stats": len(cuda.memory_stats()), "snapshot": cuda.memory_snapshot(),
            "summary": "Allocated memory" in cuda.memory_summary(),
            "seed": cuda.initial_seed(), "archs": cuda.get_arch_list(),
            "bf16": cuda.is_bf16_supported(), "initialized": cuda.is_initialized(),
            "oom_is_core_error": cuda.OutOfMemoryError is flambeau._errors.OutOfMemoryError,
        }))
    """,
    )
    assert out["counters"] == [0, 0, 0, 0]
    assert out["stats"] == 0 and out["snapshot"] == [] and out["summary"]
    assert out["seed"] == 1234
    assert out["archs"] == [] and out["bf16"] is False and out["initialized"] is False
    assert out["oom_is_core_error"]


def test_child_forked_after_initialization_refuses_cuda(install_dir, no_gpu):
    # Without a GPU CUDA cannot initialize, so the test marks the process initialized
    # (installing the fork handler) the way a successful lazy init does.
    out = run(
        install_dir,
        """
        import json, os, flambeau, flambeau_cuda
        def child_errors():
            errors = []
            for call in (lambda: flambeau.zeros(2, device="cuda"),
                         lambda: flambeau.cuda.current_device(),
                         lambda: flambeau.cuda.synchronize()):
                try:
                    call()
                    errors.append(None)
                except RuntimeError as e:
                    errors.append(str(e))
            return errors

        def in_child():
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.write(w, json.dumps(child_errors()).encode())
                os._exit(0)
            os.close(w)
            data = os.read(r, 65536)
            os.waitpid(pid, 0)
            return json.loads(data)

        before = in_child()  # forked before initialization: the ordinary reason
        flambeau_cuda._C._mark_initialized_for_tests()
        after = in_child()
        print(json.dumps({"before": before, "after": after,
                          "parent_initialized": flambeau.cuda.is_initialized()}))
    """,
    )
    assert all(
        m.startswith(NO_DEVICE_REASONS) or "No CUDA" in m or "NVIDIA" in m for m in out["before"]
    ), out["before"]
    for message in out["after"]:
        assert message is not None and "Cannot re-initialize CUDA in forked subprocess" in message
        assert "'spawn' start method" in message
    assert out["parent_initialized"] is True


def test_malformed_alloc_conf_is_a_value_error(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, os
        os.environ["FLAMBEAU_CUDA_ALLOC_CONF"] = "expandable_segments:maybe"
        import flambeau_cuda
        try:
            flambeau_cuda._C._allocator_settings()
            print(json.dumps(None))
        except ValueError as e:
            print(json.dumps(str(e)))
    """,
    )
    assert out is not None and "expandable_segments" in out


def test_pinning_needs_a_device_and_plain_tensors_are_not_pinned(install_dir, no_gpu):
    out = run(
        install_dir,
        """
        import json, flambeau
        t = flambeau.ones(3)
        try:
            t.pin_memory()
            error = None
        except RuntimeError as e:
            error = str(e)
        print(json.dumps({"error": error, "pinned": t.is_pinned()}))
    """,
    )
    assert out["error"] is not None and out["pinned"] is False, out


def test_cublas_opens_lazily_with_every_entry_point(install_dir):
    """cuBLAS is not loaded at import; opening it (as the first product does) resolves
    every function the kernels call, from the nvidia-cublas wheel."""
    out = run(
        install_dir,
        """
        import json
        import flambeau_cuda
        def loaded():
            with open("/proc/self/maps") as maps:
                return "libcublas.so" in maps.read()
        before = loaded()
        error = flambeau_cuda._C._load_cublas()
        print(json.dumps({"before": before, "error": error, "after": loaded()}))
    """,
    )
    assert out == {"before": False, "error": "", "after": True}, out


def test_from_dlpack_takes_cuda_memory_as_a_cuda_tensor(install_dir, no_gpu):
    # Another library's CUDA tensor (CuPy, torch) arrives as a flambeau CUDA tensor over
    # the same memory. Without a GPU, a CPU capsule relabelled as CUDA stands in for one:
    # the import reads no byte of it, and the producer's deleter runs when it dies.
    out = run(
        install_dir,
        """
        import ctypes, json
        import flambeau
        host = flambeau.arange(12.0).reshape(3, 4)
        capsule = flambeau.to_dlpack(host)  # a legacy "dltensor" capsule
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        managed = get(capsule, b"dltensor")
        ctypes.c_int32.from_address(managed + 8).value = 2  # device_type: kDLCUDA
        ctypes.c_int32.from_address(managed + 12).value = 0  # device_id
        t = flambeau.from_dlpack(capsule)
        print(json.dumps({"device": str(t.device), "shape": list(t.shape),
                          "stride": list(t.stride()), "same": t.data_ptr() == host.data_ptr()}))
        del t
    """,
    )
    assert out == {"device": "cuda:0", "shape": [3, 4], "stride": [4, 1], "same": True}, out


def test_cuda_tensors_cross_processes_by_ipc_handle(install_dir, no_gpu):
    # flambeau.multiprocessing learns the CUDA reduction when the plugin loads; without a
    # device, sharing says why it cannot, as every device function does.
    out = run(
        install_dir,
        """
        import json
        import flambeau
        import flambeau_cuda
        try:
            from flambeau.multiprocessing import reductions
        except ImportError:
            print(json.dumps({"mp": False}))
            raise SystemExit
        registered = reductions._device_reducers.get("cuda")
        try:
            flambeau_cuda._C._ipc_open(b"x" * 8, 0, 4)
            error = None
        except RuntimeError as e:
            error = str(e)
        print(json.dumps({"mp": True, "same": registered is flambeau_cuda._sharing.reduce_tensor,
                          "error": error}))
    """,
    )
    if not out["mp"]:
        pytest.skip("flambeau-mp is not importable here")
    assert out["same"] and "not a CUDA IPC handle" in out["error"], out
