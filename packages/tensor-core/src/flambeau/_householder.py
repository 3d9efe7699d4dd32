"""LAPACK's Householder QR in Python over the core's operators, differentiable through
them: geqrf (the packed factorization), linalg.householder_product (torch.orgqr: Q from
it) and ormqr (Q applied to a matrix)."""

from __future__ import annotations

import builtins

from flambeau import _C
from flambeau._arg_checks import check_tensor, torch_type_name
from flambeau._autocast_policy import autocast_policy
from flambeau._named_tuples import named_tuple
from flambeau._out import into_out
from flambeau.overrides import _dispatch_on


@_dispatch_on("input", "out")
@autocast_policy("fp32")
def geqrf(input, *, out=None):
    """LAPACK's QR in Householder form (a, tau): R on and above a's diagonal, the reflector
    vectors (implicit leading 1) below it, and their scales tau.

    >>> a, tau = flambeau.geqrf(flambeau.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> a
    tensor([[-5.0000, -2.2000],
            [ 0.5000,  0.4000]])
    >>> tau
    tensor([1.6000, 0.0000])
    """
    if input.dim() < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions. Got {input.dim()}")
    m, n = input.shape[-2], input.shape[-1]
    a = input.clone()
    k = builtins.min(m, n)
    taus = []
    for j in builtins.range(k):
        col = a[..., j:, j]  # (*batch, m - j)
        alpha = col[..., 0]
        tail_sq = (col[..., 1:].abs() ** 2).sum(-1)
        norm = (alpha.abs() ** 2 + tail_sq).sqrt()
        # beta = -sign(real(alpha)) * ||col||; a zero tail (real alpha) needs no reflection.
        sign = (
            _C.where(alpha.real < 0, -1.0, 1.0)
            if alpha.is_complex()
            else _C.where(alpha < 0, -1.0, 1.0)
        )
        beta = -sign * norm
        trivial = tail_sq == 0
        if alpha.is_complex():
            trivial = trivial & (alpha.imag == 0)
        safe_beta = _C.where(trivial, _C.ones((), dtype=beta.dtype), beta)
        tau = _C.where(trivial, _C.zeros((), dtype=a.dtype), (beta - alpha) / safe_beta)
        denom = _C.where(trivial, _C.ones((), dtype=a.dtype), alpha - beta)
        v = _C.cat([_C.ones_like(alpha).unsqueeze(-1), col[..., 1:] / denom.unsqueeze(-1)], -1)
        # Apply H = I - tau v v^H to the trailing columns.
        trailing = a[..., j:, j:]
        w = _C.matmul(v.conj().unsqueeze(-2), trailing)  # (*batch, 1, n - j)
        trailing = trailing - tau.unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1) * w
        new_col = _C.where(
            trivial.unsqueeze(-1), col, _C.cat([beta.to(a.dtype).unsqueeze(-1), v[..., 1:]], -1)
        )
        trailing = _C.cat([new_col.unsqueeze(-1), trailing[..., 1:]], -1)
        a = _C.cat([a[..., :j, :], _C.cat([a[..., j:, :j], trailing], -1)], -2)
        taus.append(tau)
    tau = _C.stack(taus, -1) if taus else _C.zeros(tuple(input.shape[:-2]) + (0,), dtype=a.dtype)
    res = named_tuple("geqrf", ("a", "tau"))(a, tau)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


def _reflector(a, tau, j):
    v = a[..., j:, j]
    v = _C.cat(
        [_C.zeros(tuple(a.shape[:-2]) + (j,), dtype=a.dtype), _C.ones_like(v[..., :1]), v[..., 1:]],
        -1,
    )
    return v, tau[..., j]


def _apply_reflectors(a, tau, C, left, transpose):
    """op(Q) C (left) or C op(Q) with Q = H_1 ... H_k, H_j = I - tau_j v_j v_j^H."""
    k = tau.shape[-1]
    # Q C = H_1 (H_2 (... H_k C)); Q^H C = H_k^H (... H_1^H C); likewise on the right.
    order = builtins.range(k)
    if left != transpose:
        order = reversed(order)
    for j in order:
        v, t = _reflector(a, tau, j)
        t = t.conj() if transpose else t
        t = t.unsqueeze(-1).unsqueeze(-1)
        if left:
            C = C - t * v.unsqueeze(-1) * _C.matmul(v.conj().unsqueeze(-2), C)
        else:
            C = C - t * _C.matmul(C, v.unsqueeze(-1)) * v.conj().unsqueeze(-2)
    return C


@_dispatch_on("input", "tau", "out", name="linalg_householder_product")
@autocast_policy("fp32")
def householder_product(input, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_j = I - tau_j v_j v_j^H with v_j the j-th
    column of input below the diagonal (and an implicit 1 on it): Q from geqrf's (a, tau).

    >>> A = flambeau.tensor([[3.0, 1.0], [4.0, 2.0]])
    >>> Q = flambeau.linalg.householder_product(*flambeau.geqrf(A))
    >>> Q
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    >>> flambeau.allclose(Q, flambeau.linalg.qr(A).Q)
    True
    """
    name = "torch.linalg.householder_product"
    check_tensor("linalg_householder_product", "input", 1, input)
    check_tensor("linalg_householder_product", "tau", 2, tau)
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.dim() >= 1 and tau.shape[-1] > n:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.dim()} and input.ndim is equal to {input.dim()}"
        )
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"{list(tau.shape[:-1])}"
        )
    if tau.dtype != input.dtype:
        raise RuntimeError(
            f"{name}: tau dtype {torch_type_name(tau.dtype)} does not match input dtype "
            f"{torch_type_name(input.dtype)}"
        )
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(
            f"\"householder_product\" not implemented for '{torch_type_name(input.dtype)}'"
        )
    eye = _C.eye(m, n, dtype=input.dtype).expand(tuple(input.shape[:-2]) + (m, n))
    return into_out(out, _apply_reflectors(input, tau, eye, left=True, transpose=False))


@_dispatch_on("input", "tau")
def orgqr(input, tau, *, out=None):
    """:func:`flambeau.linalg.householder_product` under LAPACK's name (torch.orgqr): Q
    from the Householder reflectors of :func:`flambeau.geqrf`.

    >>> a = flambeau.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> q = flambeau.orgqr(*flambeau.geqrf(a))
    >>> flambeau.allclose(q @ q.mT, flambeau.eye(2), atol=1e-6)
    True
    """
    return householder_product(input, tau, out=out)


@_dispatch_on("input", "tau", "other", "out")
@autocast_policy("fp32")
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) other (left) or other op(Q), Q from geqrf's (a, tau), op = conj-transpose if
    transpose.

    >>> A = flambeau.tensor([[3.0, 1.0], [4.0, 2.0]])
    >>> a, tau = flambeau.geqrf(A)
    >>> flambeau.ormqr(a, tau, flambeau.eye(2))
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    need = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != need:
        raise RuntimeError(
            f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]"
        )
    res = _apply_reflectors(input, tau, other, left, transpose)
    return res if out is None else out.copy_(res)
