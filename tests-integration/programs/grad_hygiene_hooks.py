"""Gradient hygiene for an unstable deep network: anomaly detection, clipping, hooks
and module surgery.

In the style of training-loop debugging code: a deep plain MLP with a log-barrier
term that can produce NaN gradients; torch.autograd.detect_anomaly() pinpoints the
backward function that produced NaN (and set_detect_anomaly(True) does the same),
torch.nn.utils.clip_grad_norm_(error_if_nonfinite=True) refuses non-finite norms,
clip_grad_value_ / get_total_norm / clip_grads_with_norm_ tame the large ones.
Module hooks (register_forward_pre_hook(with_kwargs=True), register_forward_hook,
register_full_backward_hook, Tensor.register_hook) record activation and gradient
statistics; named_modules() surgery swaps nn.ReLU for nn.GELU and nn.init covers
the initializers (kaiming, xavier, trunc_normal_, orthogonal_, dirac_, eye_,
sparse_). parameters_to_vector / vector_to_parameters restore a snapshot after a
skipped (non-finite) step. The network must still learn its target.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils import parameters_to_vector, vector_to_parameters


def deep_mlp(width=24, depth=8):
    layers = [nn.Linear(4, width), nn.ReLU()]
    for _ in range(depth - 2):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def swap_activations(model):
    """Replace every nn.ReLU by nn.GELU, wherever it sits."""
    swapped = 0
    for module in list(model.modules()):
        for child_name, child in module.named_children():
            if isinstance(child, nn.ReLU):
                setattr(module, child_name, nn.GELU(approximate="tanh"))
                swapped += 1
    return swapped


def init_weights(model):
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    for i, m in enumerate(linears):
        if i == 0:
            nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), nonlinearity="leaky_relu")
        elif i == len(linears) - 1:
            nn.init.trunc_normal_(m.weight, std=0.02, a=-0.04, b=0.04)
        elif i % 2:
            nn.init.orthogonal_(m.weight, gain=nn.init.calculate_gain("relu"))
        else:
            nn.init.xavier_normal_(m.weight, gain=1.0)
        nn.init.zeros_(m.bias)
    assert linears[-1].weight.abs().max() <= 0.04


def check_initializers():
    w = torch.empty(8, 8)
    nn.init.orthogonal_(w)
    assert torch.allclose(w @ w.T, torch.eye(8), atol=1e-5)
    nn.init.eye_(w)
    assert torch.equal(w, torch.eye(8))
    k = torch.empty(4, 4, 3, 3)
    nn.init.dirac_(k)
    x = torch.randn(1, 4, 5, 5)
    assert torch.allclose(F.conv2d(x, k, padding=1), x), "dirac_ is the identity conv"
    s = torch.empty(10, 6)
    nn.init.sparse_(s, sparsity=0.3)
    assert ((s == 0).sum(0) == 3).all(), "sparse_ zeroes ceil(0.3 * rows) per column"
    assert math.isclose(nn.init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
    assert nn.init.calculate_gain("tanh") == 5 / 3


def check_anomaly_detection():
    x = torch.tensor([4.0, 0.0, 1.0], requires_grad=True)
    # sqrt at 0 has an infinite derivative; times 0 it becomes NaN in backward
    with torch.autograd.detect_anomaly():
        y = (torch.sqrt(x) * torch.tensor([1.0, 0.0, 1.0])).sum()
        try:
            y.backward()
        except RuntimeError as e:
            message = str(e)
        else:
            raise AssertionError("anomaly mode should have raised")
    assert "SqrtBackward0" in message and "nan" in message, message
    assert not torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True)  # a plain call switches it on, too
    assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
    torch.autograd.set_detect_anomaly(False)
    assert not torch.is_anomaly_enabled()

    # without anomaly mode the NaN lands in .grad and clip_grad_norm_ can refuse it
    x.grad = None
    (torch.sqrt(x) * torch.tensor([1.0, 0.0, 1.0])).sum().backward()
    assert torch.isnan(x.grad).any()
    try:
        torch.nn.utils.clip_grad_norm_([x], 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        assert "non-finite" in str(e), e
    else:
        raise AssertionError("clip_grad_norm_ should refuse a NaN norm")


def main():
    torch.manual_seed(0)
    check_initializers()
    check_anomaly_detection()

    model = deep_mlp()
    assert swap_activations(model) == 7
    assert not any(isinstance(m, nn.ReLU) for m in model.modules())
    init_weights(model)

    stats = {"pre": 0, "act": [], "grad_out": []}

    def pre_hook(module, args, kwargs):
        stats["pre"] += 1
        (x,) = args
        return (x.clamp(-10, 10),), kwargs  # guard against wild inputs

    def act_hook(module, args, output):
        stats["act"].append(output.detach().abs().mean().item())

    def grad_hook(module, grad_input, grad_output):
        stats["grad_out"].append(grad_output[0].norm().item())

    handles = [model[0].register_forward_pre_hook(pre_hook, with_kwargs=True)]
    handles += [m.register_forward_hook(act_hook) for m in model if isinstance(m, nn.GELU)]
    handles.append(model[-1].register_full_backward_hook(grad_hook))

    X = torch.randn(256, 4)
    X[::25] *= 1000  # a few wild rows
    target = torch.sin(X.clamp(-10, 10)[:, :1]) + 0.5 * X.clamp(-10, 10)[:, 1:2]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    skipped, clipped_norms = 0, []
    for step in range(150):
        snapshot = parameters_to_vector(model.parameters()).detach().clone()
        opt.zero_grad()
        out = model(X)
        h = out.register_hook(lambda g: g * 1.0)  # a no-op tensor hook, removed below
        loss = F.mse_loss(out, target)
        if step == 40:  # an injected bad batch: sqrt of a negative number, NaN gradients
            loss = loss + torch.sqrt(out.min() - 1e3)
        loss.backward()
        h.remove()
        total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
        if not torch.isfinite(total):
            skipped += 1
            vector_to_parameters(snapshot, model.parameters())
            continue
        torch.nn.utils.clip_grads_with_norm_(model.parameters(), max_norm=1.0, total_norm=total)
        torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        clipped_norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        opt.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f} grad norm {total.item():.3f}")

    for h in handles:
        h.remove()
    n_pre = stats["pre"]
    model(X[:2])
    assert stats["pre"] == n_pre, "removed hooks must not run"
    assert n_pre == 150 and len(stats["grad_out"]) == 150 and len(stats["act"]) == 150 * 7
    assert skipped == 1, skipped
    assert max(clipped_norms) <= 1.0 + 1e-5
    assert all(math.isfinite(p.sum().item()) for p in model.parameters())

    with torch.no_grad():
        final = F.mse_loss(model(X.clamp(-10, 10)), target).item()
    var = target.var().item()
    print(f"final mse {final:.4f} (target variance {var:.4f})")
    assert final < 0.25 * var, (final, var)
    print("gradient hygiene OK")


if __name__ == "__main__":
    main()
