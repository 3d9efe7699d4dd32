"""A tensor subclass that carries physical units, used through a small model.

In the style of "units of measure" and call-logging tensor wrappers built on the
__torch_function__ protocol: a torch.Tensor subclass whose __torch_function__
classmethod runs the op with super().__torch_function__ (under
torch._C.DisableTorchFunctionSubclass semantics), records every op name it sees in
a log, and propagates a `unit` attribute by a small rule table (add/sub need equal
units, mul/div combine them, sum/mean keep them). A linear regression from
metres and seconds to a speed is trained on such tensors with nn.Linear, MSE loss
and SGD; the parameters stay plain, the subclass flows through F.linear, the loss
and backward. Checks the unit bookkeeping, that mismatched units raise, that
torch.overrides.get_overridable_functions / has_torch_function see the subclass,
that Tensor._make_subclass / as_subclass / the subclass's constructor give instances
of the right class, and that the fitted speed is the true one.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

LOG = []


class UnitTensor(torch.Tensor):
    """A tensor with a `unit` string; ops on it are logged and combine units."""

    @staticmethod
    def __new__(cls, data, unit=""):
        t = torch.Tensor._make_subclass(cls, torch.as_tensor(data))
        t.unit = unit
        return t

    def __init__(self, data, unit=""):
        pass

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        LOG.append(name)
        units = [a.unit for a in args if isinstance(a, UnitTensor)]
        out = super().__torch_function__(func, types, args, kwargs)
        if isinstance(out, UnitTensor):
            out.unit = combine_units(name, args, units)
        return out


def combine_units(name, args, units):
    if not units:
        return ""
    if name in ("add", "__add__", "sub", "__sub__", "__radd__", "__rsub__"):
        others = [a for a in args if isinstance(a, torch.Tensor) and not isinstance(a, UnitTensor)]
        if len(set(units)) > 1 and not others:
            raise ValueError(f"unit mismatch in {name}: {units}")
        return units[0]
    if name in ("mul", "__mul__", "__rmul__"):
        return "*".join(u for u in units if u)
    if name in ("div", "__truediv__"):
        if len(units) == 2:
            return f"{units[0]}/{units[1]}"
        return units[0] if isinstance(args[0], UnitTensor) else f"1/{units[0]}"
    return units[0]


def main():
    torch.manual_seed(0)

    # unit rules on plain ops
    d = UnitTensor([3.0, 4.0, 10.0], unit="m")
    assert type(d) is UnitTensor and d.unit == "m"
    assert type(UnitTensor.__new__(UnitTensor, d)) is UnitTensor
    t = UnitTensor([1.0, 2.0, 5.0], unit="s")
    v = d / t
    assert isinstance(v, UnitTensor) and v.unit == "m/s", (type(v), getattr(v, "unit", None))
    assert torch.allclose(v.as_subclass(torch.Tensor), torch.tensor([3.0, 2.0, 2.0]))
    assert type(v.as_subclass(torch.Tensor)) is torch.Tensor
    assert (d + d).unit == "m" and (d * 2).unit == "m"
    assert torch.sum(d).unit == "m" and d.mean().unit == "m"
    try:
        d + t
    except ValueError as e:
        assert "unit mismatch" in str(e)
    else:
        raise AssertionError("adding metres to seconds should fail")
    assert torch.overrides.has_torch_function((d,))
    assert not torch.overrides.has_torch_function((torch.ones(2),))
    assert torch.add in torch.overrides.get_overridable_functions()[torch]
    assert torch.overrides.is_tensor_like(d)

    # view/indexing ops keep the subclass
    assert isinstance(d[1:], UnitTensor) and d[1:].unit == "m"
    assert isinstance(d.view(3, 1), UnitTensor)
    assert isinstance(torch.stack([d, d]), UnitTensor)

    # train speed = distance / time with inputs in metres and seconds
    n = 256
    dist = torch.rand(n, 1) * 100.0
    secs = torch.rand(n, 1) * 10.0 + 1.0
    true_speed = 3.5
    inputs = UnitTensor(torch.cat([dist, secs * true_speed], 1), unit="m")
    target = UnitTensor(dist / 100.0 + secs * 0.0 + true_speed * secs / 10.0, unit="m")

    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scale = 1.0 / 100.0
    LOG.clear()
    for step in range(300):
        opt.zero_grad()
        pred = model(inputs * scale)
        assert isinstance(pred, UnitTensor), type(pred)
        loss = F.mse_loss(pred, target)
        assert isinstance(loss, UnitTensor)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.5f} unit {loss.unit!r}")
    print("ops seen:", sorted(set(LOG)))
    assert "mse_loss" in LOG and "backward" in LOG and "mul" in LOG, sorted(set(LOG))
    # the backward pass itself runs with the protocol off: no *_backward ops are seen
    assert not any(name.endswith("_backward") for name in LOG), sorted(set(LOG))
    for p in model.parameters():
        assert type(p) is nn.Parameter and type(p.grad) is torch.Tensor, (type(p), type(p.grad))
    final = F.mse_loss(model(inputs * scale), target).item()
    print(f"final loss {final:.6f} weights {model.weight.data.tolist()}")
    assert final < 1e-3, final
    # inputs * scale = [dist / 100, speed * secs / 100] and target = dist / 100 +
    # speed * secs / 10, so the exact fit is w = [1, 10], b = 0
    w = model.weight.detach()
    assert torch.allclose(w, torch.tensor([[1.0, 10.0]]), atol=0.05), w
    assert abs(model.bias.item()) < 0.05, model.bias

    # no_grad through the subclass and detach keep the type
    with torch.no_grad():
        out = model(inputs[:4] * scale)
    assert isinstance(out, UnitTensor) and not out.requires_grad
    assert isinstance(out.detach(), UnitTensor)
    print("unit tensor subclass OK")


if __name__ == "__main__":
    main()
