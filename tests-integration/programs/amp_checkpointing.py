"""Mixed-precision training on the CPU with activation checkpointing.

In the style of the PyTorch AMP and checkpointing recipes: torch.autocast
(device_type="cpu", dtype=torch.bfloat16) around the forward pass, with the
loss computed in float32 outside it; torch.amp.GradScaler on the CPU;
torch.utils.checkpoint.checkpoint(use_reentrant=False) on residual blocks and
checkpoint_sequential on a Sequential; a check that checkpointed gradients
match the plain ones; OneCycleLR; and which ops autocast runs in bfloat16.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, dim=32, depth=4, classes=5, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.embed = nn.Linear(16, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, classes)
        )

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            if self.use_checkpoint and self.training:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        if self.use_checkpoint and self.training:
            return checkpoint_sequential(self.head, 2, x, use_reentrant=False)
        return self.head(x)


def make_data(n, w, generator):
    x = torch.randn(n, 16, generator=generator)
    y = (x @ w + 0.1 * torch.randn(n, 5, generator=generator)).argmax(1)
    return x, y


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(16, 5, generator=g)
    x_train, y_train = make_data(1024, w, g)
    x_test, y_test = make_data(256, w, g)

    # Which dtypes autocast picks on the CPU.
    lin = nn.Linear(16, 8)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = lin(x_test[:4])
        assert out.dtype == torch.bfloat16
        assert (
            torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
        )
        s = out.float().sum()  # explicit casts are honoured
        assert s.dtype == torch.float32
        mm = torch.mm(x_test[:4], lin.weight.t())
        assert mm.dtype == torch.bfloat16
        assert (x_test[:4] + 1).dtype == torch.float32  # elementwise ops are left alone
        with torch.autocast(device_type="cpu", enabled=False):
            assert lin(x_test[:4]).dtype == torch.float32
    assert not torch.is_autocast_enabled("cpu")
    assert lin.weight.dtype == torch.float32

    # Checkpointed gradients equal the plain ones.
    plain = Net(use_checkpoint=False)
    ckpt = Net(use_checkpoint=True)
    ckpt.load_state_dict(plain.state_dict())
    for model in (plain, ckpt):
        model.train()
        F.cross_entropy(model(x_train[:64]), y_train[:64]).backward()
    for (name, p), q in zip(plain.named_parameters(), ckpt.parameters()):
        assert torch.allclose(p.grad, q.grad, atol=1e-6), name

    model = Net(use_checkpoint=True)
    epochs, batch = 6, 64
    steps = epochs * (len(x_train) // batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=steps)
    scaler = torch.amp.GradScaler("cpu")

    def evaluate():
        model.eval()
        with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            logits = model(x_test)
        assert logits.dtype == torch.bfloat16
        return F.cross_entropy(logits.float(), y_test).item(), (
            logits.argmax(1) == y_test
        ).float().mean().item()

    loss0, acc0 = evaluate()
    print(f"initial: loss {loss0:.3f} accuracy {acc0:.3f}")
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(x_train))
        for i in range(0, len(x_train), batch):
            idx = perm[i : i + batch]
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                logits = model(x_train[idx])
            loss = F.cross_entropy(logits.float(), y_train[idx])
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
        # Master weights and their gradients stay in float32.
        assert all(
            p.dtype == torch.float32 and p.grad.dtype == torch.float32 for p in model.parameters()
        )
        loss, acc = evaluate()
        print(
            f"epoch {epoch}: test loss {loss:.3f} accuracy {acc:.3f}"
            f" lr {scheduler.get_last_lr()[0]:.2e}"
        )
    assert loss < 0.5 * loss0, (loss0, loss)
    assert acc > 0.8, acc


if __name__ == "__main__":
    main()
