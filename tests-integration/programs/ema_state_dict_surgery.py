"""Weight EMA with torch._foreach ops, and state_dict surgery when the model changes.

In the style of timm's ModelEmaV3 / the EMA helpers in diffusion repos: a deepcopy'd,
eval-mode, requires_grad_(False) shadow model updated under torch.no_grad() with
torch._foreach_lerp_ (and, for buffers, a plain copy_), plus the _foreach_mul_ /
_foreach_add_ formulation some repos use. The model keeps a sinusoidal table as a
non-persistent buffer (register_buffer(..., persistent=False)), so it is absent from
state_dict. The checkpoint is then loaded into a revised architecture (a renamed layer,
a new head) the usual ways: a _register_load_state_dict_pre_hook that renames old keys,
load_state_dict(strict=False) reporting missing_keys and unexpected_keys, and filtering
by shape for a head with a different number of classes. Checks that the EMA weights are
the closed-form average, that the EMA model scores better than the noisy final weights,
and that every surgery loads exactly what it should.
"""

import copy
import math
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_classes=4, hidden=64):
        super().__init__()
        self.register_buffer(
            "freqs", torch.exp(torch.arange(4) * -math.log(10.0)), persistent=False
        )
        self.encoder = nn.Sequential(nn.Linear(8 + 8, hidden), nn.LayerNorm(hidden), nn.GELU())
        self.bn = nn.BatchNorm1d(hidden)
        self.head = nn.Linear(hidden, n_classes)

    def embed(self, x):
        t = x[:, :1] * self.freqs
        return torch.cat([x, torch.sin(t), torch.cos(t)], dim=1)

    def forward(self, x):
        return self.head(self.bn(self.encoder(self.embed(x))))


class NetV2(Net):
    """The revised model: `encoder` is now `backbone`, and there is an auxiliary head."""

    def __init__(self, n_classes=4, hidden=64):
        super().__init__(n_classes, hidden)
        self.backbone = self.encoder
        del self.encoder
        self.aux_head = nn.Linear(hidden, 1)
        self._register_load_state_dict_pre_hook(self._rename_old_keys)

    @staticmethod
    def _rename_old_keys(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        for key in list(state_dict):
            if key.startswith(prefix + "encoder."):
                new = prefix + "backbone." + key[len(prefix + "encoder.") :]
                state_dict[new] = state_dict.pop(key)

    def forward(self, x):
        return self.head(self.bn(self.backbone(self.embed(x))))


class ModelEma:
    def __init__(self, model, decay=0.99):
        self.module = copy.deepcopy(model).eval().requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        ema_params = list(self.module.parameters())
        params = list(model.parameters())
        torch._foreach_lerp_(ema_params, params, weight=1.0 - self.decay)
        for ema_b, b in zip(self.module.buffers(), model.buffers()):
            ema_b.copy_(b)


@torch.no_grad()
def ema_update_mul_add(ema_params, params, decay):
    """The other common form: ema = decay * ema + (1 - decay) * p."""
    out = torch._foreach_mul_(ema_params, decay)
    torch._foreach_add_(ema_params, params, alpha=1.0 - decay)
    return out


def make_data(n, w, g):
    x = torch.randn(n, 8, generator=g)
    y = (torch.tanh(x @ w) + 0.5 * torch.randn(n, 4, generator=g)).argmax(1)
    return x, y


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def check_foreach():
    a = [torch.ones(3), torch.full((2, 2), 2.0)]
    b = [torch.zeros(3), torch.full((2, 2), 4.0)]
    out = ema_update_mul_add(a, b, 0.75)
    assert out is None or all(o is t for o, t in zip(out, a))
    assert torch.allclose(a[0], torch.full((3,), 0.75))
    assert torch.allclose(a[1], torch.full((2, 2), 2.5))
    torch._foreach_lerp_(a, b, 0.5)
    assert torch.allclose(a[1], torch.full((2, 2), 3.25))
    norms = torch._foreach_norm(b)
    assert torch.allclose(torch.stack(norms), torch.tensor([0.0, 8.0]))


def main():
    check_foreach()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(8, 4, generator=g)
    x_train, y_train = make_data(2048, w, g)
    x_test, y_test = make_data(1024, w, g)

    model = Net()
    assert "freqs" not in model.state_dict() and "freqs" in dict(model.named_buffers())
    ema = ModelEma(model, decay=0.98)
    assert not any(p.requires_grad for p in ema.module.parameters())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    # Track one weight's EMA by hand to check the foreach update.
    manual = model.head.bias.detach().clone()
    for _ in range(300):
        model.train()
        idx = torch.randint(0, x_train.shape[0], (32,))
        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ema.update(model)
        manual = 0.98 * manual + 0.02 * model.head.bias.detach()
    assert torch.allclose(ema.module.head.bias, manual, atol=1e-5)
    assert torch.equal(ema.module.bn.running_mean, model.bn.running_mean)
    acc_model, acc_ema = accuracy(model, x_test, y_test), accuracy(ema.module, x_test, y_test)
    print(f"test accuracy: final weights {acc_model:.3f}, EMA weights {acc_ema:.3f}")
    assert acc_ema > 0.6 and acc_ema >= acc_model - 0.01, (acc_model, acc_ema)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ema.pt")
        torch.save({"model": model.state_dict(), "model_ema": ema.module.state_dict()}, path)
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = ckpt["model_ema"]
    assert "freqs" not in state and "bn.num_batches_tracked" in state

    # 1. Same architecture, strict load.
    same = Net()
    assert same.load_state_dict(state) is not None
    assert accuracy(same, x_test, y_test) == acc_ema

    # 2. Renamed layer + new head: the pre-hook renames, strict=False reports the rest.
    v2 = NetV2()
    result = v2.load_state_dict(state, strict=False)
    assert sorted(result.missing_keys) == ["aux_head.bias", "aux_head.weight"], result
    assert result.unexpected_keys == [], result
    assert torch.equal(v2.backbone[0].weight, ema.module.encoder[0].weight)
    assert accuracy(v2, x_test, y_test) == acc_ema
    try:
        v2.load_state_dict(state)
    except RuntimeError as e:
        assert "aux_head.weight" in str(e)
    else:
        raise AssertionError("strict load with missing keys did not raise")

    # 3. Extra keys are reported as unexpected.
    extra = dict(state, **{"old_head.weight": torch.zeros(3)})
    result = Net().load_state_dict(extra, strict=False)
    assert result.unexpected_keys == ["old_head.weight"] and result.missing_keys == []

    # 4. A head with a different number of classes: keep only tensors whose shapes match.
    new = Net(n_classes=6)
    own = new.state_dict()
    filtered = {k: v for k, v in state.items() if k in own and v.shape == own[k].shape}
    result = new.load_state_dict(filtered, strict=False)
    assert sorted(result.missing_keys) == ["head.bias", "head.weight"], result
    assert torch.equal(new.bn.running_var, ema.module.bn.running_var)
    assert new.freqs.shape == (4,)


if __name__ == "__main__":
    main()
