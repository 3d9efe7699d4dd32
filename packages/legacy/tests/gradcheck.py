"""Finite-difference references for the legacy modules (float64, central differences)."""

from __future__ import annotations

import flambeau


def tensors_of(t):
    """The tensors of a tensor or a (nested) table, depth first."""
    if isinstance(t, flambeau.Tensor):
        return [t]
    return [x for item in t for x in tensors_of(item)]


def like(t, fn):
    if isinstance(t, flambeau.Tensor):
        return fn(t)
    return [like(x, fn) for x in t]


def _loss(module, input, weights):
    out = tensors_of(module.forward(input))
    return sum(float((o * w).sum()) for o, w in zip(out, weights))


def numeric_grad(f, tensor, eps):
    """d f / d tensor by central differences, perturbing tensor in place."""
    flat = tensor.view(-1)
    grad = flambeau.zeros(tensor.numel(), dtype=flambeau.float64)
    for i in range(tensor.numel()):
        v = float(flat[i])
        flat[i] = v + eps
        up = f()
        flat[i] = v - eps
        down = f()
        flat[i] = v
        grad[i] = (up - down) / (2 * eps)
    return grad.view(tensor.shape)


def check_module(module, input, *, eps=1e-6, atol=1e-6, rtol=1e-5, check_input=True,
                 check_params=True, scale=1.0):  # fmt: skip
    """Compare updateGradInput and accGradParameters with finite differences of
    L = Σ output ∘ R for a random R (so gradOutput = R)."""
    out = module.forward(input)
    weights = [flambeau.randn(o.shape, dtype=flambeau.float64) for o in tensors_of(out)]
    grad_output = weights[0] if isinstance(out, flambeau.Tensor) else _rebuild(out, weights)

    module.forward(input)
    module.zeroGradParameters()
    grad_input = like(module.backward(input, grad_output, scale), lambda t: t.clone())
    p = module.parameters()
    grad_params = [g.clone() for g in p[1]] if p is not None else []

    f = lambda: _loss(module, input, weights)  # noqa: E731
    if check_input:
        for x, gx in zip(tensors_of(input), tensors_of(grad_input)):
            num = numeric_grad(f, x, eps)
            assert gx.shape == x.shape, (gx.shape, x.shape)
            assert flambeau.allclose(gx, num, rtol=rtol, atol=atol), (
                f"gradInput mismatch for {module!r}: max error {float((gx - num).abs().max())}"
            )
    if check_params and p is not None:
        for w, gw in zip(p[0], grad_params):
            num = numeric_grad(f, w, eps) * scale
            assert flambeau.allclose(gw, num, rtol=rtol, atol=atol), (
                f"gradParameters mismatch for {module!r}: max error {float((gw - num).abs().max())}"
            )
    return grad_input, grad_params


def _rebuild(template, flat):
    it = iter(flat)
    return like(template, lambda t: next(it))
