"""LoRA fine-tuning written with torch.nn.utils.parametrize.

In the style of the "LoRA from scratch" tutorials: a classifier is pretrained on one
task, frozen with requires_grad_(False), then every nn.Linear gets a low-rank
parametrization W + (B @ A) * alpha / r registered with
parametrize.register_parametrization (A kaiming-initialized, B zero so the model starts
out unchanged); only the LoRA factors are optimized on a shifted task. Checks that the
base weights (parametrizations.weight.original) never move, that switching the adapters
off gives back the pretrained model, that parametrize.cached() gives the same outputs,
and that remove_parametrizations(leave_parametrized=True) merges the adapters into
plain weights.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils import parametrize

IN, HIDDEN, CLASSES = 16, 64, 5


class LoRAParametrization(nn.Module):
    def __init__(self, features_in, features_out, rank=4, alpha=8):
        super().__init__()
        self.lora_A = nn.Parameter(torch.zeros((rank, features_in)))
        self.lora_B = nn.Parameter(torch.zeros((features_out, rank)))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scale = alpha / rank
        self.enabled = True

    def forward(self, original_weights):
        if self.enabled:
            return original_weights + torch.matmul(self.lora_B, self.lora_A) * self.scale
        return original_weights


def add_lora(model, rank=4):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            features_out, features_in = module.weight.shape
            parametrize.register_parametrization(
                module, "weight", LoRAParametrization(features_in, features_out, rank=rank)
            )


def enable_lora(model, enabled=True):
    for module in model.modules():
        if isinstance(module, LoRAParametrization):
            module.enabled = enabled


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_task(teacher, n, generator):
    x = torch.randn(n, IN, generator=generator)
    return x, (x @ teacher).argmax(dim=1)


def train(model, params, x, y, steps, lr):
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    for _ in range(steps):
        idx = torch.randint(0, x.size(0), (128,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return loss.item()


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    teacher_a = torch.randn(IN, CLASSES, generator=g)
    # Task B differs from task A by a rank-2 change of the teacher.
    teacher_b = teacher_a + 1.5 * torch.randn(IN, 2, generator=g) @ torch.randn(
        2, CLASSES, generator=g
    )
    xa, ya = make_task(teacher_a, 4000, g)
    xb, yb = make_task(teacher_b, 4000, g)
    xa_test, ya_test = make_task(teacher_a, 1000, g)
    xb_test, yb_test = make_task(teacher_b, 1000, g)

    model = MLP()
    train(model, model.parameters(), xa, ya, steps=400, lr=3e-3)
    acc_a = accuracy(model, xa_test, ya_test)
    acc_b_before = accuracy(model, xb_test, yb_test)
    print(f"pretrained: task A {acc_a:.3f}, task B {acc_b_before:.3f}")
    assert acc_a > 0.85, acc_a

    for p in model.parameters():
        p.requires_grad_(False)
    n_base = sum(p.numel() for p in model.parameters())
    base_weights = {k: v.clone() for k, v in model.state_dict().items()}
    add_lora(model, rank=4)
    lora_params = [p for n, p in model.named_parameters() if "lora_" in n]
    n_lora = sum(p.numel() for p in lora_params)
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert len(trainable) == len(lora_params) == 6
    print(f"base parameters {n_base}, LoRA parameters {n_lora}")
    assert n_lora < n_base / 5
    assert parametrize.is_parametrized(model.fc1, "weight")
    assert isinstance(model.fc1.parametrizations.weight[0], LoRAParametrization)
    # B starts at zero, so the adapted model is the pretrained one.
    with torch.no_grad():
        assert accuracy(model, xa_test, ya_test) == acc_a

    train(model, lora_params, xb, yb, steps=400, lr=1e-2)
    acc_b = accuracy(model, xb_test, yb_test)
    print(f"after LoRA: task B {acc_b:.3f}")
    assert acc_b > acc_b_before + 0.1 and acc_b > 0.8, (acc_b_before, acc_b)

    # The frozen weights did not move; the keys of the state_dict tell where they live.
    sd = model.state_dict()
    assert "fc1.parametrizations.weight.original" in sd
    assert "fc1.parametrizations.weight.0.lora_A" in sd
    for name in ("fc1", "fc2", "fc3"):
        assert torch.equal(
            sd[f"{name}.parametrizations.weight.original"], base_weights[f"{name}.weight"]
        )
        assert torch.equal(sd[f"{name}.bias"], base_weights[f"{name}.bias"])

    # Adapters off: the pretrained model again.
    enable_lora(model, False)
    assert accuracy(model, xa_test, ya_test) == acc_a
    enable_lora(model, True)

    with torch.no_grad():
        expected = model(xb_test)
        with parametrize.cached():
            cached = model(xb_test)
        assert torch.allclose(expected, cached)
        manual = (
            model.fc1.parametrizations.weight.original
            + (
                model.fc1.parametrizations.weight[0].lora_B
                @ model.fc1.parametrizations.weight[0].lora_A
            )
            * 2.0
        )
        assert torch.allclose(model.fc1.weight, manual, atol=1e-6)

    # Merge for deployment: plain Linear layers with the adapted weights.
    for name in ("fc1", "fc2", "fc3"):
        parametrize.remove_parametrizations(getattr(model, name), "weight", leave_parametrized=True)
    assert not parametrize.is_parametrized(model)
    assert sorted(model.state_dict()) == sorted(base_weights)
    with torch.no_grad():
        assert torch.allclose(model(xb_test), expected, atol=1e-5)
    assert accuracy(model, xb_test, yb_test) == acc_b


if __name__ == "__main__":
    main()
