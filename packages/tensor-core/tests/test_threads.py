"""Tensors used from several Python threads at once (long kernels release the GIL)."""

from __future__ import annotations

import threading

import numpy as np

import flambeau


def test_concurrent_kernels_from_python_threads_give_correct_results():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((300, 400)).astype(np.float32) for _ in range(4)]
    expected = [(a.astype(np.float64).sum(0), (a @ a.T)[:3, :3], np.exp(a).max()) for a in arrays]
    errors = []

    def work(i):
        try:
            t = flambeau.from_numpy(arrays[i])
            for _ in range(20):
                np.testing.assert_allclose(t.sum(0).numpy(), expected[i][0], rtol=1e-4, atol=1e-3)
                np.testing.assert_allclose(
                    (t @ t.t())[:3, :3].numpy(), expected[i][1], rtol=1e-4, atol=1e-3
                )
                assert abs(flambeau.exp(t).max().item() - expected[i][2]) <= 1e-4 * expected[i][2]
                u = t.clone()
                u.add_(1.0)
                np.testing.assert_allclose(u.numpy(), arrays[i] + 1.0)
        except Exception as e:  # surfaced in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


def test_kernels_release_and_retake_the_interpreter_lock():
    # A kernel large enough to release the lock, then Python work on the same thread.
    t = flambeau.ones(1 << 20)
    assert t.sum().item() == float(1 << 20)
    assert (t + 1).sum().item() == float(2 << 20)
