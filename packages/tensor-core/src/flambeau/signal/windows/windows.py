"""The window functions of flambeau.signal.windows, PyTorch's ``torch.signal.windows``.

Each window evaluates its formula on ``M`` evenly spaced sample points (one
``linspace``), so the result is a single vectorized expression. A symmetric window
(``sym=True``) spans ``M - 1`` intervals of the period; a periodic one (``sym=False``)
is the first ``M`` points of the symmetric window of length ``M + 1``.
"""

import math
from collections.abc import Iterable

import flambeau
from flambeau.signal.windows._common import (
    check_window_args,
    empty_window,
    resolve_dtype,
    sample_points,
    unit_window,
)


def _intervals(M, sym):
    """How many sample intervals a period holds: ``M - 1`` when symmetric, ``M`` when
    periodic (the periodic window drops the last point of the ``M + 1`` window)."""
    return M - 1 if sym else M


def exponential(
    M,
    *,
    center=None,
    tau=1.0,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The exponential (Poisson) window, ``w_n = exp(-|n - center| / tau)``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        center (float, optional): where the window peaks; only for periodic windows.
            Default: ``M / 2`` if ``sym`` is False, else ``(M - 1) / 2``.
        tau (float, optional): the decay; must be positive. Default: 1.0.
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.exponential(5)
    tensor([0.1353, 0.3679, 1.0000, 0.3679, 0.1353])
    >>> flambeau.signal.windows.exponential(4, sym=False, center=1.0, tau=2.0)
    tensor([0.6065, 1.0000, 0.6065, 0.3679])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    # The points are (n - center) / tau for n = 0 .. M - 1.
    start = -center / tau
    end = (M - 1 - center) / tau
    k = sample_points(start, end, M, dtype, layout, device, requires_grad)
    return flambeau.exp(-flambeau.abs(k))


def cosine(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The cosine (sine) window, ``w_n = sin(pi (n + 0.5) / M)``, as SciPy defines it:
    it starts and ends above zero.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.cosine(4)
    tensor([0.3827, 0.9239, 0.9239, 0.3827])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("cosine", M, dtype, layout)
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = sample_points(0.5 * step, (M - 0.5) * step, M, dtype, layout, device, requires_grad)
    return flambeau.sin(k)


def gaussian(
    M,
    *,
    std=1.0,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Gaussian window, ``w_n = exp(-(n - c)^2 / (2 std^2))`` centred at ``c``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        std (float, optional): the standard deviation; must be positive. Default: 1.0.
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.gaussian(5, std=2.0)
    tensor([0.6065, 0.8825, 1.0000, 0.8825, 0.6065])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    # The points are (n - c) / (std * sqrt(2)), so that the window is exp(-k^2).
    scale = 1 / (std * math.sqrt(2))
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = sample_points(
        start * scale, (start + M - 1) * scale, M, dtype, layout, device, requires_grad
    )
    return flambeau.exp(-(k**2))


def kaiser(
    M,
    *,
    beta=12.0,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Kaiser window, ``w_n = I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)`` with
    ``N = M - 1`` if ``sym`` else ``M``, and ``I0`` the modified Bessel function
    (:func:`flambeau.i0`).

    Args:
        M (int): the number of points of the window.

    Keyword args:
        beta (float, optional): the shape parameter; must be non-negative. Default: 12.0.
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.kaiser(5, beta=2.0)
    tensor([0.4387, 0.8348, 1.0000, 0.8348, 0.4387])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    if M == 1:
        return unit_window(dtype, layout, device, requires_grad)
    # beta in the window's dtype, so that beta^2 - k^2 is never negative at the ends.
    beta = flambeau.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * beta / _intervals(M, sym)
    end = flambeau.minimum(beta, -beta + (M - 1) * step)
    k = sample_points(-beta, end, M, dtype, layout, device, requires_grad)
    return flambeau.i0(flambeau.sqrt(beta * beta - k * k)) / flambeau.i0(beta)


def general_cosine(
    M,
    *,
    a,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The generalized cosine window, a weighted sum of cosines:
    ``w_n = sum_i (-1)^i a_i cos(2 pi i n / N)`` with ``N = M - 1`` if ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        a (Iterable): the coefficients ``a_i`` of the cosines; not empty.
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.general_cosine(5, a=[0.5, 0.5])
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("general_cosine", M, dtype, layout)
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    if M == 1:
        return unit_window(dtype, layout, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / _intervals(M, sym)
    k = sample_points(0, (M - 1) * step, M, dtype, layout, device, requires_grad)
    signed = flambeau.tensor(
        [(-1) ** i * w for i, w in enumerate(a)],
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )
    order = flambeau.arange(signed.shape[0], dtype=dtype, device=device)
    # One row per cosine term (its order times the sample points), summed over the terms.
    terms = signed.unsqueeze(-1) * flambeau.cos(order.unsqueeze(-1) * k)
    return terms.sum(0)


def general_hamming(
    M,
    *,
    alpha=0.54,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The generalized Hamming window, ``w_n = alpha - (1 - alpha) cos(2 pi n / N)``
    with ``N = M - 1`` if ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        alpha (float, optional): the window coefficient. Default: 0.54.
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.general_hamming(5, alpha=0.6)
    tensor([0.2000, 0.6000, 1.0000, 0.6000, 0.2000])
    """
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hamming(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Hamming window, ``w_n = 0.54 - 0.46 cos(2 pi n / N)`` with ``N = M - 1`` if
    ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.hamming(5)
    tensor([0.0800, 0.5400, 1.0000, 0.5400, 0.0800])
    """
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hann(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Hann window, ``w_n = 0.5 - 0.5 cos(2 pi n / N) = sin^2(pi n / N)`` with
    ``N = M - 1`` if ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.hann(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Blackman window,
    ``w_n = 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)`` with ``N = M - 1`` if
    ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.blackman(5, dtype=flambeau.float64)
    tensor([-1.3878e-17,  3.4000e-01,  1.0000e+00,  3.4000e-01, -1.3878e-17],
           dtype=flambeau.float64)
    """
    dtype = resolve_dtype(dtype)
    # Checked here so that errors name blackman, as PyTorch's do.
    check_window_args("blackman", M, dtype, layout)
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def nuttall(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """Nuttall's minimum 4-term Blackman-Harris window,
    ``w_n = 0.3635819 - 0.4891775 cos(z) + 0.1365995 cos(2z) - 0.0106411 cos(3z)``
    with ``z = 2 pi n / N`` and ``N = M - 1`` if ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.nuttall(5)
    tensor([3.6280e-04, 2.2698e-01, 1.0000e+00, 2.2698e-01, 3.6280e-04])
    """
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M,
    *,
    sym=True,
    dtype=None,
    layout=flambeau.strided,
    device=None,
    requires_grad=False,
):
    """The Bartlett (triangular) window, ``w_n = 1 - |2n / N - 1|`` with ``N = M - 1``
    if ``sym`` else ``M``.

    Args:
        M (int): the number of points of the window.

    Keyword args:
        sym (bool, optional): a symmetric window (True) or a periodic one. Default: True.
        dtype, layout, device, requires_grad: as for any factory function.

    >>> flambeau.signal.windows.bartlett(4, sym=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    dtype = resolve_dtype(dtype)
    check_window_args("bartlett", M, dtype, layout)
    if M == 0:
        return empty_window(dtype, layout, device, requires_grad)
    if M == 1:
        return unit_window(dtype, layout, device, requires_grad)
    step = 2 / _intervals(M, sym)
    k = sample_points(-1, -1 + (M - 1) * step, M, dtype, layout, device, requires_grad)
    return 1 - flambeau.abs(k)
