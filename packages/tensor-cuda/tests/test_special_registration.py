"""The special functions' CUDA kernels (special_ops.cu, registered by
elementwise_math.cpp), the Bessel and Airy functions of bessel_functions.h included, are
registered when the plugin is imported, with no GPU needed: the core then dispatches
those operators to cuda instead of raising NotImplementedError (test_special_functions.py
and test_bessel_functions.py check their arithmetic on the host, tests/gpu/ their results
on a device)."""

from __future__ import annotations

from test_plugin import cuda_kernels

SPECIAL_KERNELS = [
    "lgamma",
    "digamma",
    "erfinv",
    "mvlgamma",
    "polygamma",
    "igamma",
    "igammac",
    "i0",
    "special_entr",
    "special_erfcx",
    "special_ndtr",
    "special_ndtri",
    "special_log_ndtr",
    "special_zeta",
    "special_spherical_bessel_j0",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_chebyshev_polynomial_t",
    "special_hermite_polynomial_h",
    "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
    # bessel_functions.h
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_airy_ai",
]


def test_special_function_kernels_are_registered_for_cuda(install_dir):  # noqa: F811
    out = cuda_kernels(install_dir)
    missing = sorted(set(SPECIAL_KERNELS) - out)
    assert not missing, missing
