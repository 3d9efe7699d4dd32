"""gradcheck / gradgradcheck: analytical gradients against finite differences.

Complex tensors are checked as pairs of reals, as PyTorch does: a complex input
is perturbed in its real and imaginary parts (its gradient dL/dx + i dL/dy gives
both derivatives), and a complex output w = u + iv counts as the two real
outputs u and v, reached by backward with grad_output 1 (for u) and 1j (for v).
"""

from __future__ import annotations

import flambeau as F

from .engine import run_backward
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` (a RuntimeError) when analytical and numerical
    gradients differ.

    >>> class Double(flambeau.autograd.Function):
    ...     forward = staticmethod(lambda ctx, x: x * 2)
    ...     backward = staticmethod(lambda ctx, grad: grad * 3)  # wrong: should be grad * 2
    >>> x = flambeau.tensor([1.0], dtype=flambeau.float64, requires_grad=True)
    >>> try:
    ...     flambeau.autograd.gradcheck(Double.apply, (x,))
    ... except flambeau.autograd.GradcheckError as e:
    ...     print(e)
    Jacobian mismatch for output 0 with respect to input 0 element 0: ... analytical 3.0
    """


def _as_tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _flat_outputs(fn, inputs):
    out = _as_tuple(fn(*inputs))
    return [
        o
        for o in out
        if isinstance(o, F.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
    ]


def _real_flat(t):
    """t flattened to reals: a complex tensor's parts interleaved (shares t's memory)."""
    return F.view_as_real(t).reshape(-1) if t.is_complex() else t.reshape(-1)


class _IndexedFlat:
    """Row-major flat indexing into a strided tensor, writing through to its storage."""

    def __init__(self, t):
        self.t, self.shape = t, tuple(t.shape)

    def numel(self):
        return self.t.numel()

    def _index(self, k):
        idx = []
        for n in reversed(self.shape):
            k, r = divmod(k, n)
            idx.append(r)
        return tuple(reversed(idx))

    def __getitem__(self, k):
        return self.t[self._index(k)]

    def __setitem__(self, k, v):
        self.t[self._index(k)] = v


def _numerical_jacobian(fn, inputs, i, eps):
    """d(all outputs as reals) / d(inputs[i] as reals), by central differences."""
    x = inputs[i]
    flat = _real_flat(x.detach())  # shares memory with x's data only when x is contiguous
    if not x.is_contiguous():  # e.g. lu_factor's column-major LU: index x's own storage
        real = F.view_as_real(x.detach()) if x.is_complex() else x.detach()
        flat = _IndexedFlat(real)
    columns = []
    # Finite differences need values only: recording a graph for each evaluation (and
    # for every later read of the columns) would cost more than the evaluation itself.
    with no_grad():
        for k in range(flat.numel()):
            orig = flat[k].item()
            flat[k] = orig + eps
            plus = [_real_flat(o).clone() for o in _flat_outputs(fn, inputs)]
            flat[k] = orig - eps
            minus = [_real_flat(o).clone() for o in _flat_outputs(fn, inputs)]
            flat[k] = orig
            columns.append(
                F.cat([(p - m) / (2 * eps) for p, m in zip(plus, minus)]).tolist() if plus else []
            )
    return columns  # columns[k][j] = d out_j / d x_k, as Python floats


def _analytical_rows(fn, inputs, diff, create_graph=False):
    """For each real output j (a complex element gives two), the gradients of all inputs."""
    outs = _flat_outputs(fn, inputs)
    rows = []
    for _o_idx, o in enumerate(outs):
        units = (1.0, 1j) if o.is_complex() else (1.0,)
        if not o.requires_grad:  # an output independent of the inputs: zero rows
            rows += [(None,) * len(diff)] * (o.numel() * len(units))
            continue
        for j in range(o.numel()):
            for unit in units:
                g = F.zeros(tuple(o.shape), dtype=o.dtype)
                g.reshape(-1)[j] = unit
                grads = run_backward(
                    [o],
                    [g],
                    retain_graph=True,
                    create_graph=create_graph,
                    inputs=[inputs[i] for i in diff],
                    capture=True,
                    allow_unused=True,
                )
                rows.append(grads)
    return rows


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    fast_mode=False,
):
    """Checks gradients of func at inputs (float64 recommended) against finite differences.

    >>> x = flambeau.tensor([0.5, 1.0], dtype=flambeau.float64, requires_grad=True)
    >>> flambeau.autograd.gradcheck(flambeau.sin, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, F.Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in diff:
        if inputs[i].dtype not in (F.float64, F.complex128):
            import warnings

            warnings.warn(
                f"gradcheck: input {i} is {inputs[i].dtype}, not float64 or complex128; "
                "the check may fail for precision reasons",
                stacklevel=2,
            )
    rows = _analytical_rows(func, inputs, diff)
    for pos, i in enumerate(diff):
        numerical = _numerical_jacobian(func, inputs, i, eps)
        analytic_rows = [None if r[pos] is None else _real_flat(r[pos]).tolist() for r in rows]
        for k, column in enumerate(numerical):
            for j, expected in enumerate(column):
                analytic = 0.0 if analytic_rows[j] is None else analytic_rows[j][k]
                if abs(analytic - expected) > atol + rtol * abs(expected):
                    msg = (
                        f"Jacobian mismatch for output {j} with respect to input {i} "
                        f"element {k}: numerical {expected!r}, analytical {analytic!r}"
                    )
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
):
    """Checks second derivatives: gradcheck of the map inputs -> vjp(func, inputs, v).

    >>> x = flambeau.tensor([0.5, 1.0], dtype=flambeau.float64, requires_grad=True)
    >>> flambeau.autograd.gradgradcheck(flambeau.sin, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, F.Tensor) and x.requires_grad]
    outs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        gen = F.Generator().manual_seed(0)
        grad_outputs = [F.rand(tuple(o.shape), dtype=o.dtype, generator=gen) for o in outs]
    grad_outputs = _as_tuple(grad_outputs)

    @enable_grad()  # gradcheck evaluates it without grad mode for finite differences
    def first_grads(*xs):
        ys = _flat_outputs(func, xs)
        gs = run_backward(
            ys,
            list(grad_outputs),
            retain_graph=True,
            create_graph=True,
            inputs=[xs[i] for i in diff],
            capture=True,
            allow_unused=True,
        )
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
