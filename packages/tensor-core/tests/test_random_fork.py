"""flambeau.random.fork_rng and thread_safe_generator."""

import types

import pytest

import flambeau as F
from flambeau import backends
from flambeau import random as frandom


def test_fork_rng_restores_the_default_generator():
    F.manual_seed(7)
    before = F.get_rng_state()
    expected_next = F.rand(4)
    F.set_rng_state(before)
    with frandom.fork_rng():
        inside = F.rand(4)
        F.manual_seed(123)  # even reseeding inside is undone
        F.rand(2)
    assert F.equal(F.get_rng_state(), before)
    assert F.equal(inside, expected_next)  # the block continued the outer stream
    assert F.equal(F.rand(4), expected_next)  # and the outer stream continues as if untouched


def test_fork_rng_restores_after_an_exception():
    before = F.get_rng_state()
    with pytest.raises(ValueError):
        with frandom.fork_rng(devices=[]):
            F.rand(3)
            raise ValueError("boom")
    assert F.equal(F.get_rng_state(), before)


def test_fork_rng_disabled_forks_nothing():
    before = F.get_rng_state()
    with frandom.fork_rng(enabled=False):
        F.rand(3)
    assert not F.equal(F.get_rng_state(), before)
    with frandom.fork_rng(device_type="meta"):
        pass


def test_fork_rng_devices_without_a_backend(monkeypatch):
    monkeypatch.setattr(backends, "_entry_points", {})
    with pytest.raises(RuntimeError, match="no backend provides device type 'cuda'"):
        with frandom.fork_rng(devices=[0]):
            pass
    with frandom.fork_rng(devices=iter([]), device_type="cpu"):  # an iterator is fine
        pass


def test_fork_rng_forks_a_plugins_own_state(monkeypatch):
    states = {0: "a0", 1: "a1"}
    module = types.ModuleType("fake")
    module.get_rng_state = lambda d: states[d]
    module.set_rng_state = lambda s, d: states.__setitem__(d, s)
    monkeypatch.setattr(backends, "_entry_points", {"fakedev": object()})
    monkeypatch.setattr(backends, "module", lambda name: module)
    with frandom.fork_rng(devices=[1], device_type="fakedev"):
        states[0], states[1] = "changed0", "changed1"
    assert states == {0: "changed0", 1: "a1"}  # only the named device is restored


def test_thread_safe_generator_is_none_outside_data_workers():
    assert frandom.thread_safe_generator() is None
