"""Formulas of the complex-number operators, and the conjugation helpers the
other families' formulas use.

Gradients follow PyTorch's convention: the gradient of a real loss L with
respect to z = x + iy is dL/dx + i dL/dy, so a holomorphic f gets
grad_input = grad_output * conj(f'(z)). For real tensors conjugation is the
identity, and the helpers return their argument without calling the core.
"""

from __future__ import annotations

import flambeau as F

from .registry import formula


def conj(t):
    """t conjugated; t itself when it is real (or a Python number)."""
    if isinstance(t, F.Tensor):
        return t.conj() if t.is_complex() else t
    return t.conjugate() if isinstance(t, complex) else t


@formula("view_as_real", needs_input=False)
def _view_as_real(g, a):
    return {"input": F.view_as_complex(g.contiguous())}


@formula("view_as_complex", needs_input=False)
def _view_as_complex(g, a):
    return {"input": F.view_as_real(g)}


@formula("real", needs_input=False)
def _real(g, a):
    return {"input": F.complex(g, F.zeros_like(g))}


@formula("imag", needs_input=False)
def _imag(g, a):
    return {"input": F.complex(F.zeros_like(g), g)}


@formula("conj", "conj_physical", needs_input=False)
def _conj(g, a):
    return {"input": conj(g)}


@formula("resolve_conj", needs_input=False)
def _resolve_conj(g, a):
    return {"input": g}


@formula("adjoint", needs_input=False)
def _adjoint(g, a):
    return {"input": F.adjoint(g)}


@formula("angle")
def _angle(g, a):
    z = a["input"]
    if not z.is_complex():
        return {"input": g * 0}
    # d angle = (x dy - y dx) / |z|^2, i.e. the gradient i z / |z|^2 (0 at z = 0).
    r2 = z.real * z.real + z.imag * z.imag
    safe = F.where(r2 == 0, F.ones_like(r2), r2)
    return {"input": F.where(r2 == 0, F.zeros_like(z), g * z * 1j / safe)}


@formula("polar")
def _polar(g, a):
    r, t = a["abs"], a["angle"]
    cis = F.complex(F.cos(t), F.sin(t))
    gc = conj(g)
    return {"abs": F.real(gc * cis), "angle": F.real(gc * cis * r * 1j)}


@formula("complex", needs_input=False)
def _complex(g, a):
    return {"real": F.real(g), "imag": F.imag(g)}
