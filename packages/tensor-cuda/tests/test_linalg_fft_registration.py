"""The linear algebra and FFT group (cuSOLVER, cuBLAS trsm, cuFFT), with no GPU needed:
its kernels are registered when the plugin is imported, the ones cuSOLVER has no routine
for are not (the core then raises NotImplementedError for cuda), and cuSOLVER and cuFFT
are opened lazily, from their wheels, with every entry point the kernels call.
tests/gpu/test_gpu_linalg_fft.py checks the results on a device."""

from __future__ import annotations

from test_plugin import cuda_kernels, run

REGISTERED = [
    "linalg_getrf",
    "linalg_getrs",
    "linalg_potrf",
    "linalg_sytrf",
    "linalg_geqrf",
    "linalg_syevd",
    "linalg_gesdd",
    "linalg_trsm",
    "_fft_c2c",
    "_fft_r2c",
    "_fft_c2r",
]
# cuSOLVER has no sytrs, no gelsd (its gels wants full rank and returns no rank or
# singular values); geev waits for a device to be checked on.
NOT_REGISTERED = ["linalg_sytrs", "linalg_gelsd", "linalg_geev"]


def test_linalg_and_fft_kernels_are_registered_for_cuda(install_dir):  # noqa: F811
    out = cuda_kernels(install_dir)
    missing = sorted(set(REGISTERED) - out)
    assert not missing, missing
    assert not set(NOT_REGISTERED) & out, sorted(set(NOT_REGISTERED) & out)


def test_cusolver_and_cufft_open_lazily_with_every_entry_point(install_dir):  # noqa: F811
    """Neither library is mapped by the import; opening them (as the first factorization
    or transform does) resolves every function the kernels call, from the wheels."""
    out = run(
        install_dir,
        """
        import json
        import flambeau_cuda
        def loaded(name):
            with open("/proc/self/maps") as maps:
                return name in maps.read()
        before = [loaded("libcusolver.so"), loaded("libcufft.so")]
        errors = [flambeau_cuda._C._load_cusolver(), flambeau_cuda._C._load_cufft()]
        after = [loaded("libcusolver.so"), loaded("libcufft.so")]
        print(json.dumps({"before": before, "errors": errors, "after": after}))
    """,
    )
    assert out == {"before": [False, False], "errors": ["", ""], "after": [True, True]}, out
