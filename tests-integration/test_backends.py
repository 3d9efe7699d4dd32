"""Backend plugins: the "testdev" backend (testdev_backend/) against the core wheel.

One fresh virtual environment gets the core wheel from dist/ and builds the test
backend once against the installed core's header alone (flambeau.get_include()),
then every check runs in its own interpreter, since loading is per process.
The backend's wheel also carries two faulty backends: "testdev_next", built for
the next ABI major, and "testdev_broken", whose import raises. The shared operator
table (shared/flambeau_testing) runs on testdev against the CPU, as on any backend.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
from wheelhouse import CORE, DIST, ROOT, make_venv, newest_wheels, run

BACKEND_DIR = ROOT / "tests-integration" / "testdev_backend"
# One worker builds the backend (the module fixture) and runs every check on it.
pytestmark = pytest.mark.xdist_group("testdev_backend")


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    """An interpreter with the core wheel and the testdev backend built against it."""
    wheels = newest_wheels()
    if CORE not in wheels:
        pytest.fail(f"no {CORE} wheel in {DIST}: run `nox -s build` first")
    root = tmp_path_factory.mktemp("backends")
    py = make_venv(root / "venv")
    # flambeau-mp too, when built: the backend registers how its tensors cross processes.
    extra = [wheels["flambeau-mp"]] if "flambeau-mp" in wheels else []
    run(
        py,
        "-m",
        "pip",
        "install",
        "-q",
        wheels[CORE],
        *extra,
        "scikit-build-core>=0.10",
        "cmake",
        "ninja",
    )
    start = time.monotonic()
    # No build isolation: the backend must build against the core installed here.
    run(
        py, "-m", "pip", "install", "-q", "--no-build-isolation", BACKEND_DIR,
        f"-Cbuild-dir={root / 'build'}", cwd=root,
    )  # fmt: skip
    print(f"testdev backend built and installed in {time.monotonic() - start:.1f} s")
    return py


def check(python: Path, code: str, tmp_path: Path, **env: str) -> str:
    """Run `code` (after `import flambeau`) in a new interpreter; it must print ok."""
    script = PRELUDE + textwrap.dedent(code) + "\nprint('ok')\n"
    out = run(python, "-c", script, cwd=tmp_path, env=env)
    assert out.strip().endswith("ok"), out
    return out


# Starts every check: `raises(exc_type, fn)` returns the exception fn raised.
PRELUDE = """
import sys, numpy as np, flambeau

def raises(exc_type, fn):
    try:
        fn()
    except exc_type as e:
        return e
    raise AssertionError(f"{fn} did not raise {exc_type.__name__}")
"""

TRIGGERS = {
    "device": 'flambeau.device("testdev")',
    "to": 'flambeau.ones(2).to("testdev")',
    "factory": 'flambeau.zeros(2, device="testdev")',
    "module": "flambeau.testdev.is_available()",
}


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_loads_lazily_when_the_device_is_named(python, trigger, tmp_path):
    check(
        python,
        f"""
        states = {{b.name: b.status for b in flambeau.backends.available()}}
        assert states == dict(testdev="not loaded", testdev_broken="not loaded",
                              testdev_next="not loaded"), states
        assert flambeau.ones(3).sum().item() == 3.0  # CPU work loads no backend
        assert not any(m.startswith("flambeau_testdev") for m in sys.modules)
        {TRIGGERS[trigger]}
        assert "flambeau_testdev" in sys.modules
        assert "flambeau_testdev_next" not in sys.modules
        info = {{b.name: b for b in flambeau.backends.available()}}["testdev"]
        assert info.status == "loaded" and info.error is None, info
        assert (info.distribution, info.version) == ("flambeau-testdev", "0.1.0"), info
        assert flambeau.testdev.device_count() == 2 and flambeau.testdev.is_available()
        """,
        tmp_path,
    )


def test_import_alone_reads_no_entry_points(python, tmp_path):
    check(
        python,
        """
        assert "flambeau.backends" not in sys.modules
        assert flambeau.backends._entry_points is None
        """,
        tmp_path,
    )


def test_round_trips_through_the_device(python, tmp_path):
    check(
        python,
        """
        x = np.arange(24).reshape(2, 3, 4)
        for dtype in (np.float32, np.float64, np.int32, np.int64):
            a = flambeau.tensor(x.astype(dtype))
            d = a.to("testdev", non_blocking=True)
            assert d.device == flambeau.device("testdev:0") and d.device.type == "testdev"
            assert d.device.index == 0 and str(d.device) == "testdev:0" and not d.is_cpu
            assert d.dtype == a.dtype
            back = d.cpu()
            assert back.device.type == "cpu"
            np.testing.assert_array_equal(back.numpy(), x.astype(dtype))
            # Strided on either side, and the dtype converted on the way.
            t = a.transpose(0, 2).to("testdev")
            np.testing.assert_array_equal(t.cpu().numpy(), x.astype(dtype).transpose(2, 1, 0))
            np.testing.assert_array_equal(d.transpose(0, 2).cpu().numpy(),
                                          x.astype(dtype).transpose(2, 1, 0))
            f = d.to(flambeau.float64)
            assert f.device.type == "testdev" and f.dtype == flambeau.float64
            np.testing.assert_array_equal(f.cpu().numpy(), x.astype(np.float64))
            assert d.to("testdev") is d and d.to("testdev", copy=True) is not d
            c = flambeau.empty(2, 3, 4, dtype=a.dtype).copy_(d)
            np.testing.assert_array_equal(c.numpy(), x.astype(dtype))
        on1 = flambeau.ones(3, device="testdev:1")
        assert on1.device.index == 1
        np.testing.assert_array_equal(on1.cpu().numpy(), np.ones(3, np.float32))
        assert "device='testdev:0'" in repr(flambeau.zeros(2, device="testdev"))
        """,
        tmp_path,
    )


def test_kernels_match_numpy(python, tmp_path):
    check(
        python,
        """
        rng = np.random.default_rng(0)
        for dtype in (np.float32, np.float64):
            a = rng.standard_normal((3, 4)).astype(dtype)
            b = rng.standard_normal(4).astype(dtype)
            m = rng.standard_normal((4, 5)).astype(dtype)
            da, db, dm = (flambeau.tensor(v).to("testdev") for v in (a, b, m))
            tol = dict(rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose((da + db).cpu().numpy(), a + b, **tol)
            two = flambeau.add(da, db, alpha=2)
            np.testing.assert_allclose(two.cpu().numpy(), a + 2 * b, **tol)
            np.testing.assert_allclose((da * db).cpu().numpy(), a * b, **tol)
            np.testing.assert_allclose((da * 3).cpu().numpy(), a * 3, **tol)
            np.testing.assert_allclose(da.sum().cpu().numpy(), a.sum(), **tol)
            np.testing.assert_allclose(da.sum(dim=1).cpu().numpy(), a.sum(1), **tol)
            np.testing.assert_allclose(da.sum(0, keepdim=True).cpu().numpy(),
                                       a.sum(0, keepdims=True), **tol)
            np.testing.assert_allclose((da @ dm).cpu().numpy(), a @ m, **tol)
            np.testing.assert_allclose((da.T[:2] @ da[:, :3]).cpu().numpy(), a.T[:2] @ a[:, :3],
                                       **tol)
            assert (da @ dm).device.type == "testdev"
            np.testing.assert_array_equal(flambeau.full((2, 2), 2.5, device="testdev",
                                                        dtype=da.dtype).cpu().numpy(),
                                          np.full((2, 2), 2.5, dtype))
            da.add_(db)
            np.testing.assert_allclose(da.cpu().numpy(), a + b, **tol)
            da.fill_(-1)
            np.testing.assert_array_equal(da.cpu().numpy(), np.full((3, 4), -1, dtype))
        i = np.arange(12, dtype=np.int64).reshape(3, 4)
        di = flambeau.tensor(i).to("testdev")
        np.testing.assert_array_equal((di + di * 2).cpu().numpy(), i + i * 2)
        np.testing.assert_array_equal(di.sum(1).cpu().numpy(), i.sum(1))
        """,
        tmp_path,
    )


def test_deterministic_mode_honours_the_backends_marks(python, tmp_path):
    # The testdev backend declares its sum nondeterministic (declare_nondeterministic).
    check(
        python,
        """
        import warnings
        d = flambeau.ones(2, 3).to("testdev")
        rows = [r for r in flambeau.ops_table() if r["name"] == "sum"]
        assert rows and all(r["nondeterministic"] == ["testdev"] for r in rows), rows
        assert d.sum().cpu().item() == 6.0  # mode off: runs
        flambeau.use_deterministic_algorithms(True)
        e = raises(RuntimeError, lambda: d.sum(dim=1))
        assert str(e).startswith("sum_testdev does not have a deterministic implementation"), e
        raises(RuntimeError, lambda: flambeau.sum(d))
        assert flambeau.ones(2, 3).sum().item() == 6.0  # the CPU's sum is deterministic
        assert (d + d).cpu().numpy().sum() == 12.0  # unmarked operators run on the device
        flambeau.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert d.sum().cpu().item() == 6.0
        assert [str(x.message).split(" ")[0] for x in w] == ["sum_testdev"], w
        flambeau.use_deterministic_algorithms(False)
        # The table's own marks are for the core's device types (cuda), not testdev.
        assert [r["nondeterministic"] for r in flambeau.ops_table()
                if r["name"] == "index_add"] == [["cuda"]]
        """,
        tmp_path,
    )


def test_allocator_statistics_move(python, tmp_path):
    check(
        python,
        """
        td = flambeau.testdev
        td.empty_cache()
        base, reserved0 = td.memory_allocated(), td.memory_reserved()
        cpu_before = flambeau._C._allocator_stats("cpu")["allocated_bytes"]
        x = flambeau.zeros(1024, device="testdev")  # 4096 bytes
        assert td.memory_allocated() == base + 4096
        assert td.memory_reserved() >= td.memory_allocated()
        assert td.max_memory_allocated() >= base + 4096
        assert flambeau._C._allocator_stats("testdev")["allocated_bytes"] == base + 4096
        assert flambeau._C._allocator_stats("cpu")["allocated_bytes"] == cpu_before
        del x
        assert td.memory_allocated() == base
        assert td.memory_reserved() >= reserved0 + 4096  # cached for reuse
        y = flambeau.zeros(1024, device="testdev")
        assert td.memory_reserved() >= reserved0 + 4096
        del y
        td.empty_cache()
        assert td.memory_reserved() == reserved0
        td.reset_peak_memory_stats()
        assert td.max_memory_allocated() == td.memory_allocated()
        z = flambeau.zeros(256, device="testdev:1")
        assert td.memory_allocated(1) == 1024 and td.memory_allocated(0) == base
        del z
        assert td.memory_stats(1)["allocations"] == 0
        """,
        tmp_path,
    )


def test_cross_device_operations_raise(python, tmp_path):
    check(
        python,
        """
        c, d = flambeau.ones(3), flambeau.ones(3, device="testdev")
        m, dm = flambeau.ones(3, 3), flambeau.ones(3, 3, device="testdev")
        for fn in (lambda: c + d, lambda: d * c, lambda: m @ dm, lambda: dm.sum() + m):
            msg = str(raises(RuntimeError, fn))
            assert "cpu" in msg and "testdev:0" in msg, msg
        msg = str(raises(RuntimeError, lambda: d + flambeau.ones(3, device="testdev:1")))
        assert "testdev:0" in msg and "testdev:1" in msg, msg
        assert (d + 1).device.type == "testdev"  # Python numbers go anywhere
        msg = str(raises(TypeError, lambda: d.numpy()))
        assert "testdev" in msg, msg
        """,
        tmp_path,
    )


def test_missing_kernel_raises_not_implemented(python, tmp_path):
    check(
        python,
        """
        d = flambeau.ones(3, device="testdev")
        msg = str(raises(NotImplementedError, lambda: d.exp()))
        assert "'exp'" in msg and "testdev" in msg, msg
        msg = str(raises(NotImplementedError, lambda: flambeau.ones(3, dtype=flambeau.float16,
                                                                    device="testdev")))
        assert "'fill_'" in msg and "testdev" in msg and "float16" in msg, msg
        assert flambeau.ones(3).exp().sum().item() > 0  # the CPU is untouched
        """,
        tmp_path,
    )


def test_kernels_with_argument_structs_cross_the_abi(python, tmp_path):
    # avg_pool's kernel takes a PoolGeometry: testdev reads it as flb_pool_geometry (ABI 1.2).
    check(
        python,
        """
        x = flambeau.arange(2 * 3 * 7 * 6, dtype=flambeau.float64).reshape(2, 3, 7, 6).sin()
        for kw in [dict(kernel_size=3), dict(kernel_size=(3, 2), stride=(2, 1), padding=1),
                   dict(kernel_size=2, ceil_mode=True, count_include_pad=False),
                   dict(kernel_size=3, padding=1, divisor_override=5)]:
            want = flambeau.avg_pool2d(x, **kw)
            got = flambeau.avg_pool2d(x.to("testdev"), **kw)
            assert got.device.type == "testdev", got.device
            assert np.allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12), kw
        """,
        tmp_path,
    )


def test_data_sized_results_are_counted_then_filled_on_the_device(python, tmp_path):
    # nonzero and masked_select (and so x[mask]) count with testdev's _nonzero_count, then
    # fill the result the core allocated on the device: no CPU round trip, no warning.
    # unique returns three data-sized tensors with no C form: it runs on the CPU, warned
    # once, its results moved back.
    check(
        python,
        """
        import warnings
        x = flambeau.tensor([[0, 3], [2, 0], [0, 0]], dtype=flambeau.float32)
        d = x.to("testdev")
        mask = x.gt(0).to("testdev")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nz, ms, picked = d.nonzero(), flambeau.masked_select(d, mask), d[mask]
            rows, cols = d.nonzero(as_tuple=True)
            none = flambeau.zeros(2, 3).to("testdev").nonzero()
            scalar = flambeau.tensor(5.0).to("testdev").nonzero()
            empty = flambeau.zeros(0, 4).to("testdev").nonzero()
            ints = flambeau.tensor([0, 7, 0, -1]).to("testdev").nonzero()
        for t in (nz, ms, picked, rows, none, scalar, empty, ints):
            assert t.device.type == "testdev", t.device
        assert nz.cpu().tolist() == [[0, 1], [1, 0]]
        assert ms.cpu().tolist() == [3.0, 2.0] == picked.cpu().tolist()
        assert rows.cpu().tolist() == [0, 1] and cols.cpu().tolist() == [1, 0]
        assert tuple(none.shape) == (0, 2) and tuple(empty.shape) == (0, 2)
        assert tuple(scalar.shape) == (1, 0) and ints.cpu().tolist() == [[1], [3]]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            u = flambeau.unique(d)
            flambeau.unique(d)
        assert u.device.type == "testdev" and u.cpu().tolist() == [0.0, 2.0, 3.0]
        msgs = [str(m.message) for m in w]
        assert sum("'_unique2' runs on the CPU" in m for m in msgs) == 1, msgs
        """,
        tmp_path,
    )


def test_register_kernel_checks_the_name(python, tmp_path):
    check(
        python,
        """
        flambeau.device("testdev")
        have = set(flambeau._C._operators_with_kernel("testdev"))
        assert {"add", "mul", "sum", "bmm", "fill_", "copy_", "avg_pool"} <= have, have
        assert "exp" not in have and "_unique2" not in have, have
        assert {"_nonzero_count", "nonzero", "masked_select"} <= have, have
        import flambeau_testdev._testdev as td
        assert td.try_register_kernel("fill_") is None
        msg = td.try_register_kernel("no_such_kernel")
        assert "no kernel named 'no_such_kernel'" in msg and "backend_kernels.h" in msg, msg
        msg = td.try_register_kernel("_unique2")
        assert "returns a tensor" in msg and "runs on the CPU" in msg, msg
        """,
        tmp_path,
    )


def test_autoload_off(python, tmp_path):
    check(
        python,
        """
        msg = str(raises(RuntimeError, lambda: flambeau.device("testdev")))
        assert "FLAMBEAU_BACKEND_AUTOLOAD" in msg and "load('testdev')" in msg, msg
        assert "flambeau_testdev" not in sys.modules
        flambeau.backends.load("testdev")
        assert flambeau.zeros(2, device="testdev").device.type == "testdev"
        """,
        tmp_path,
        FLAMBEAU_BACKEND_AUTOLOAD="0",
    )


def test_allow_list(python, tmp_path):
    check(
        python,
        """
        states = {b.name: b.status for b in flambeau.backends.available()}
        assert states["testdev"] == "blocked" and states["testdev_broken"] == "not loaded"
        msg = str(raises(RuntimeError, lambda: flambeau.device("testdev")))
        assert "FLAMBEAU_BACKENDS" in msg, msg
        assert "flambeau_testdev" not in sys.modules
        """,
        tmp_path,
        FLAMBEAU_BACKENDS="cuda,testdev_broken",
    )


def test_abi_mismatch_is_refused_clearly(python, tmp_path):
    check(
        python,
        """
        major, minor = flambeau._C._backend_abi_version
        e = raises(RuntimeError, lambda: flambeau.device("testdev_next"))
        cause = e.__cause__
        assert isinstance(cause, ImportError), repr(cause)
        msg = str(cause)
        assert f"ABI {major + 1}.{minor}" in msg and f"ABI {major}.{minor}" in msg, msg
        assert "flambeau-testdev 0.1.0" in msg and "upgrade flambeau-tensor-core" in msg, msg
        assert "testdev_next" in str(e) and "failed to load" in str(e)
        # Recorded: asked again, the same error; CPU work and other backends unharmed.
        again = raises(RuntimeError, lambda: flambeau.zeros(1, device="testdev_next"))
        assert again.__cause__ is cause
        info = {b.name: b for b in flambeau.backends.available()}["testdev_next"]
        assert info.status == "failed" and info.error is cause
        assert flambeau.ones(2).sum().item() == 2.0
        assert flambeau.zeros(2, device="testdev").device.type == "testdev"
        """,
        tmp_path,
    )


def test_broken_backend_breaks_nothing_else(python, tmp_path):
    check(
        python,
        """
        assert flambeau.ones(2).sum().item() == 2.0
        for fn in (lambda: flambeau.device("testdev_broken"), lambda: flambeau.testdev_broken):
            e = raises(RuntimeError, fn)
            assert "testdev_broken" in str(e) and "fails on purpose" in str(e.__cause__), e
        assert flambeau.ones(2, device="testdev").device.type == "testdev"
        """,
        tmp_path,
    )


def test_concurrent_first_use_loads_once(python, tmp_path):
    check(
        python,
        """
        import threading
        out, errors = [], []
        def use():
            try:
                out.append(flambeau.zeros(4, device="testdev").cpu().sum().item())
            except Exception as e:
                errors.append(e)
        threads = [threading.Thread(target=use) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert not errors and out == [0.0] * 8, errors
        assert flambeau.backends.load("testdev") is sys.modules["flambeau_testdev"]
        """,
        tmp_path,
    )


def test_a_backend_shares_its_tensors_across_processes(python, tmp_path):
    # The hook of flambeau.multiprocessing: the backend registered a reducer on import.
    check(
        python,
        """
        try:
            import flambeau.multiprocessing as mp
        except ImportError:
            print("flambeau-mp not installed"); print("ok"); raise SystemExit
        t = flambeau.arange(6.0).to("testdev")

        def double(conn):
            x = conn.recv()
            conn.send((str(x.device), (x * 2).cpu().tolist()))

        ctx = mp.get_context("fork")
        parent, child = ctx.Pipe()
        p = ctx.Process(target=double, args=(child,))
        p.start()
        parent.send(t)
        device, values = parent.recv()
        p.join()
        assert device.startswith("testdev"), device
        assert values == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], values
        """,
        tmp_path,
    )


# Operators whose kernels testdev_backend/src/testdev.c registers (avg_pool serves
# avg_pool1d/2d/3d).
TESTDEV_OPERATORS = (
    "add",
    "mul",
    "sum",
    "bmm",
    "fill_",
    "copy_",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
)


def test_operator_table_matches_the_cpu(python, tmp_path):
    # The table's rows of those operators, every sample moved to testdev and compared with
    # the CPU's result; dtypes testdev has no kernel for are skipped with its message.
    out = run(
        python, "-m", "flambeau_testing.run_on_device", "testdev",
        "--ops", ",".join(TESTDEV_OPERATORS),
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT / "shared")},
    )  # fmt: skip
    summary = json.loads(out)
    assert summary["mismatches"] == [], json.dumps(summary["mismatches"], indent=1)
    assert set(TESTDEV_OPERATORS) <= set(summary["rows_checked"]), summary
    assert summary["cases_checked"] > 0, summary
    reasons = summary["skip_reasons"]
    assert all(reason.strip() for reason in reasons), reasons
    assert sum(reasons.values()) == summary["cases_skipped"] > 0, summary


def test_every_operator_on_memory_the_host_cannot_read(python, tmp_path):
    # testdev maps its memory PROT_NONE outside its own copies and kernels, as a GPU's
    # is unreadable from the host: every row of the table runs on it, so core code that
    # read a device tensor's memory directly would crash this process. Each case either
    # matches the CPU or is skipped with testdev's NotImplementedError (no kernel).
    out = run(
        python, "-m", "flambeau_testing.run_on_device", "testdev",
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT / "shared")},
    )  # fmt: skip
    summary = json.loads(out)
    assert summary["mismatches"] == [], json.dumps(summary["mismatches"], indent=1)
    assert summary["cases_checked"] > 5000, summary


def test_item_and_tolist_copy_a_device_tensor_to_the_host(python, tmp_path):
    out = run(
        python, "-c",
        "import flambeau; x = flambeau.tensor([1.5, 2.5]).to('testdev');"
        "print(x[1].item(), x.tolist(), x.sum().item())",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.split() == ["2.5", "[1.5,", "2.5]", "4.0"]


def test_non_blocking_reaches_the_copy_hooks_and_oom_is_out_of_memory_error(python, tmp_path):
    check(
        python,
        """
        import flambeau_testdev._testdev as td
        before = td.non_blocking_copies()
        host = flambeau.arange(6.0)
        dev = host.to("testdev", non_blocking=True)  # the caller's memory: asynchronous
        assert td.non_blocking_copies() == before + 1
        back = flambeau.empty(6)
        back.copy_(dev, non_blocking=True)
        assert td.non_blocking_copies() == before + 2 and flambeau.equal(back, host)
        # A copy through a staging buffer (a strided source) blocks, whatever was asked.
        host[::2].to("testdev", non_blocking=True)
        dev.cpu()
        assert td.non_blocking_copies() == before + 2
        try:
            flambeau.empty(1 << 50, dtype=flambeau.uint8, device="testdev")
            raise AssertionError("a petabyte was allocated")
        except flambeau.OutOfMemoryError as e:  # a RuntimeError, as torch's
            assert isinstance(e, RuntimeError) and "testdev arena exhausted" in str(e), e
        """,
        tmp_path,
    )


def test_zero_dim_cpu_tensors_go_with_device_tensors_as_numbers(python, tmp_path):
    # PyTorch's rule (optimizers keep `step` and `lr` as 0-dim CPU tensors beside CUDA
    # parameters): a 0-dim CPU tensor joins an elementwise operation on any device.
    check(
        python,
        """
        dev = flambeau.ones(2, device="testdev")
        for got in (flambeau.tensor(2.0) + dev, dev * flambeau.tensor(3.0),
                    flambeau.tensor(2) + dev):
            assert got.device == flambeau.device("testdev", 0), got.device
            assert got.cpu().tolist() == [3.0, 3.0], got.cpu()
        dev.add_(flambeau.tensor(1.0))
        assert dev.cpu().tolist() == [2.0, 2.0]
        for other in (flambeau.ones(1), flambeau.ones(2)):  # not 0-dim: refused
            try:
                other + dev
                raise AssertionError("a CPU tensor joined a testdev one")
            except RuntimeError as e:
                assert "expected all tensors to be on the same device" in str(e), e
        """,
        tmp_path,
    )


def test_lapack_results_stay_on_the_device_and_are_read_back(python, tmp_path):
    # testdev provides getrf and getrs (unblocked, in its guarded memory): the pivots,
    # info and factors the kernels write live on the device, and the frontends read
    # them back for their checks and results.
    check(python, """
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((3, 4, 4)), rng.standard_normal((3, 4, 2))
        A, B = flambeau.tensor(a).to("testdev"), flambeau.tensor(b).to("testdev")
        lu, piv, info = flambeau.linalg.lu_factor_ex(A)
        assert piv.device.type == info.device.type == "testdev", (piv.device, info.device)
        assert (info.cpu().numpy() == 0).all() and (piv.cpu().numpy() >= 1).all()
        np.testing.assert_allclose(flambeau.linalg.det(A).cpu().numpy(), np.linalg.det(a))
        sign, logabs = flambeau.linalg.slogdet(A)
        assert sign.device.type == "testdev"
        np.testing.assert_allclose(logabs.cpu().numpy(), np.linalg.slogdet(a)[1])
        np.testing.assert_allclose(flambeau.linalg.inv(A).cpu().numpy(), np.linalg.inv(a))
        np.testing.assert_allclose(
            flambeau.linalg.lu_solve(lu, piv, B, adjoint=True).cpu().numpy(),
            np.linalg.solve(a.transpose(0, 2, 1), b))
        singular = flambeau.tensor(np.zeros((2, 3, 3))).to("testdev")
        assert flambeau.linalg.lu_factor_ex(singular)[2].cpu().tolist() == [1, 1]
        e = raises(flambeau.linalg.LinAlgError, lambda: flambeau.linalg.inv(singular))
        assert "(Batch element 0): The diagonal element 1 is zero" in str(e), e
        zero_piv = flambeau.zeros(3, 4, dtype=flambeau.int32).to("testdev")
        e = raises(RuntimeError, lambda: flambeau.linalg.lu_solve(lu, zero_piv, B))
        assert "greater or equal to 1" in str(e), e
    """, tmp_path)  # fmt: skip
