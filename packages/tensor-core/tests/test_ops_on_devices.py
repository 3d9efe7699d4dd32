"""The operator table's device axis: every row on every other device this environment has
(backend plugins, CUDA among them) against the CPU's results, and the driver that compares
them (flambeau_testing.check_on_device), checked here on the CPU with rows made to differ."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flambeau
from flambeau.backends import BackendInfo
from flambeau_testing import assert_on_device, check_on_device, devices, other_devices
from flambeau_testing.optable import OpTest, Sample, all_tests
from flambeau_testing.run_on_device import main as run_on_device

OTHER_DEVICES = other_devices()
ON_DEVICES = [
    pytest.param(op, device, id=f"{device}-{op.id}")
    for device in OTHER_DEVICES
    for op in all_tests()
] or [
    pytest.param(
        None,
        None,
        marks=pytest.mark.skip(reason="no device but the CPU here (no backend plugin sees one)"),
    )
]


@pytest.mark.parametrize("op,device", ON_DEVICES)
def test_row_on_device_matches_the_cpu(op, device):
    assert_on_device(op, device)


# ---- the driver, on the CPU ---------------------------------------------------------------


def row(fn, samples=None, dtypes=("float64",)):
    """A table row calling fn on one float sample (or `samples`)."""
    samples = samples or [Sample((np.array([1.0, -2.0, 3.0]),))]
    return OpTest("fake", fn, lambda *a: None, lambda dtype, rng: iter(samples), dtypes)


def second_call_differs(first, second):
    """fn giving first(x) on its first call (the device's) and second(x) after (the CPU's)."""
    calls = []

    def fn(x):
        calls.append(x)
        return (first if len(calls) == 1 else second)(x)

    return fn


def test_equal_results_are_checked_case_by_case():
    add = next(op for op in all_tests() if op.id == "add")
    report = check_on_device(add, "cpu", ("float32", "int64"))
    n = sum(1 for d in ("float32", "int64") for _ in add.samples(d, np.random.default_rng(0)))
    assert report.ok and report.skipped == [] and len(report.checked) == n == 14
    assert report.checked[0] == "add-float32[0]"


@pytest.mark.parametrize(
    "device_result,message",
    [
        (lambda x: x + 1e-3, "3 of 3 values differ from the CPU's (largest difference 0.001"),
        (lambda x: x.float(), "dtype flambeau.float32, the CPU's is flambeau.float64"),
        (lambda x: x[:2], "shape (2,), the CPU's is (3,)"),
        (lambda x: x.sqrt(), "NaN at 1 other positions"),
        (lambda x: (x, x), "tuple where the CPU gave Tensor"),
        (lambda x: x.tolist(), "list where the CPU gave Tensor"),
    ],
)
def test_a_different_result_is_a_mismatch(device_result, message):
    report = check_on_device(row(second_call_differs(device_result, lambda x: x)), "cpu")
    assert not report.ok and report.checked == []
    [(case, what)] = report.mismatches
    assert case == "fake-float64[0]" and message in what, what


def test_tolerances_are_the_rows():
    off = second_call_differs(lambda x: x + 1e-6, lambda x: x)
    assert not check_on_device(row(off), "cpu").ok  # float64 default: 1e-10
    loose = row(second_call_differs(lambda x: x + 1e-6, lambda x: x))
    loose.atol = 1e-5
    assert check_on_device(loose, "cpu").ok
    ints = row(second_call_differs(lambda x: x.long() + 1, lambda x: x.long()))
    [(_, what)] = check_on_device(ints, "cpu").mismatches
    assert "3 of 3 values differ" in what


def test_nan_in_the_same_places_agrees():
    report = check_on_device(row(lambda x: x.sqrt()), "cpu")
    assert report.ok and report.checked == ["fake-float64[0]"]


def test_no_kernel_is_a_skip_with_the_backends_message():
    calls = []

    def fn(x):
        calls.append(x)
        raise NotImplementedError("operator 'fake' is not implemented for device 'mydev'")

    report = check_on_device(row(fn), "cpu")
    assert report.ok and report.checked == [] and len(calls) == 1  # no CPU call after it
    assert report.skipped == [
        ("fake-float64[0]", "operator 'fake' is not implemented for device 'mydev'")
    ]


def test_a_device_error_the_cpu_has_not_is_a_mismatch():
    def fails_first(x):
        raise RuntimeError("device lost")

    report = check_on_device(row(second_call_differs(fails_first, lambda x: x)), "cpu")
    assert report.mismatches == [
        ("fake-float64[0]", "the CPU returned, the device raised RuntimeError: device lost")
    ]


def test_samples_without_tensors_are_skipped_not_passed():
    report = check_on_device(row(lambda n: flambeau.zeros(n), [Sample((3,), note="n")]), "cpu")
    assert report.checked == [] and report.skipped == [
        ("fake-float64[0] (n)", "no tensor argument: the call never reaches the device")
    ]


def test_in_place_rows_run_on_separate_copies():
    report = check_on_device(row(lambda x: x.add_(1)), "cpu")
    assert report.ok and report.checked == ["fake-float64[0]"]


def test_tensor_lists_and_keywords_move_too():
    moved = []

    def fn(xs, *, other):
        moved.append(other)
        return flambeau.stack(xs) + other

    sample = Sample(
        ([np.ones(2), np.zeros(2)],), {"other": flambeau.ones(2, dtype=flambeau.float64)}
    )
    report = check_on_device(row(fn, [sample]), "cpu")
    assert report.ok and moved[0] is not moved[1]  # the device's call got a copy


def test_assert_on_device_fails_skips_and_warns():
    with pytest.raises(pytest.fail.Exception, match="fake on cpu differs from the CPU"):
        assert_on_device(row(second_call_differs(lambda x: x + 1, lambda x: x)), "cpu")

    def no_kernel(x):
        raise NotImplementedError("no kernel here")

    with pytest.raises(pytest.skip.Exception, match="fake on cpu: no kernel here"):
        assert_on_device(row(no_kernel), "cpu")
    some = [Sample((np.ones(2),)), Sample((np.ones(2, np.float32),))]

    def no_float32(x):
        if x.dtype == flambeau.float32:
            raise NotImplementedError("no float32")
        return x

    with pytest.warns(UserWarning, match="fake on cpu: 1 cases skipped: no float32"):
        assert_on_device(row(no_float32, some), "cpu")


# ---- the devices found, and the command line -------------------------------------------------


def test_devices_start_with_the_cpu():
    assert devices()[0] == "cpu" and devices()[1:] == OTHER_DEVICES


def test_a_backend_that_fails_to_load_is_left_out_with_a_warning(monkeypatch):
    installed = [
        BackendInfo("brokendev", "flambeau-brokendev", "0.1", "not loaded", None),
        BackendInfo("blockeddev", "flambeau-blockeddev", "0.1", "blocked", None),
        BackendInfo("nodev", "flambeau-nodev", "0.1", "not loaded", None),
    ]

    class NoDevice:
        @staticmethod
        def is_available():
            return False

    def module(name):
        if name == "brokendev":
            raise RuntimeError("the flambeau backend for device type 'brokendev' failed to load")
        assert name == "nodev", "a blocked backend must not be loaded"
        return NoDevice

    monkeypatch.setattr(flambeau.backends, "available", lambda: installed)
    monkeypatch.setattr(flambeau.backends, "module", module)
    with pytest.warns(RuntimeWarning, match="device 'brokendev' left out: the flambeau backend"):
        assert devices() == ["cpu"]


def test_run_on_device_prints_a_json_summary(capsys):
    assert run_on_device(["cpu", "--ops", "mul,bmm", "--dtypes", "int64,float32"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["device"] == "cpu" and summary["rows"] == 2
    assert sorted(summary["rows_checked"]) == ["bmm", "mul"]
    assert summary["cases_checked"] > 0 and summary["mismatches"] == []
    assert summary["cases_skipped"] == 0 and summary["skip_reasons"] == {}
    assert run_on_device(["--list"]) == 0
    assert json.loads(capsys.readouterr().out) == devices()


def test_run_on_device_fails_on_a_mismatch(monkeypatch, capsys):
    odd = row(second_call_differs(lambda x: x * 2, lambda x: x))
    monkeypatch.setattr("flambeau_testing.run_on_device.all_tests", lambda: [odd])
    assert run_on_device(["cpu"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert [m["case"] for m in summary["mismatches"]] == ["fake-float64[0]"]


def test_run_on_device_refuses_an_unusable_device(capsys):
    assert run_on_device(["nosuchdev"]) == 2
    assert "device 'nosuchdev' is unusable" in capsys.readouterr().err
