"""The counting, sampling and window group's CUDA kernels (bincount, histc,
value_selecting_reduction_backward, the samplers beyond uniform/normal/random/
bernoulli, the window functions) are registered when the plugin is imported, with no
GPU needed: the core then dispatches those operators to cuda instead of raising
NotImplementedError (tests/gpu/ checks their results on a device)."""

from __future__ import annotations

from test_plugin import cuda_kernels

GROUP_KERNELS = [
    "bincount",
    "histc",
    "value_selecting_reduction_backward",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
    "poisson",
    "multinomial",
    "randperm",
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
]


def test_counting_sampling_and_window_kernels_are_registered_for_cuda(install_dir):  # noqa: F811
    out = cuda_kernels(install_dir)
    missing = sorted(set(GROUP_KERNELS) - out)
    assert not missing, missing
