"""A binarized network trained with a straight-through estimator, with hooks and a profiler.

In the style of "Extending PyTorch": a custom torch.autograd.Function for the sign
with a straight-through (clipped identity) backward, the docs' LinearFunction with
ctx.save_for_backward and ctx.needs_input_grad checked by torch.autograd.gradcheck;
forward hooks capturing activations, a forward pre-hook, a full backward hook
recording gradient norms, Tensor.register_hook, hook handles removed;
torch.profiler.profile with record_function; and a full training checkpoint
(model, optimizer, a ChainedScheduler, RNG state) resumed to the same trajectory.
"""

import io

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.autograd import Function, gradcheck
from flambeau.profiler import ProfilerActivity, profile, record_function


class SignSTE(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.where(input >= 0, torch.ones_like(input), -torch.ones_like(input))

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * (input.abs() <= 1).to(grad_output.dtype)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class BinaryLinear(nn.Linear):
    """Weights binarized in the forward pass; latent real-valued weights are trained."""

    def forward(self, input):
        return LinearFunction.apply(input, SignSTE.apply(self.weight), self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = BinaryLinear(16, 64)
        self.bn1 = nn.BatchNorm1d(64)
        self.fc2 = BinaryLinear(64, 3)
        self.bn2 = nn.BatchNorm1d(3)

    def forward(self, x):
        x = SignSTE.apply(self.bn1(self.fc1(x)))
        return self.bn2(self.fc2(x))


def make_data(n, generator):
    x = torch.randn(n, 16, generator=generator)
    y = (x[:, :4].sum(1) > 0).long() + (x[:, 4:8].sum(1) > 1).long()
    return x, y


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x_train, y_train = make_data(1024, g)
    x_test, y_test = make_data(256, g)

    # The custom Functions' gradients.
    inp = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
    w = torch.randn(5, 3, dtype=torch.double, requires_grad=True)
    b = torch.randn(5, dtype=torch.double, requires_grad=True)
    assert gradcheck(LinearFunction.apply, (inp, w, b), eps=1e-6, atol=1e-4)
    t = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0], requires_grad=True)
    out = SignSTE.apply(t)
    assert out.tolist() == [-1.0, -1.0, 1.0, 1.0, 1.0]
    out.sum().backward()
    assert t.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == "SignSTEBackward"

    model = Net()
    activations, grad_norms, calls = {}, {}, []

    def save_activation(name):
        def hook(module, input, output):
            activations[name] = output.detach()

        return hook

    def save_grad_norm(name):
        def hook(module, grad_input, grad_output):
            grad_norms[name] = grad_output[0].norm().item()

        return hook

    handles = [
        model.fc1.register_forward_hook(save_activation("fc1")),
        model.bn2.register_forward_hook(save_activation("bn2")),
        model.fc2.register_full_backward_hook(save_grad_norm("fc2")),
        model.register_forward_pre_hook(lambda module, args: calls.append(args[0].shape)),
    ]

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.ChainedScheduler(
        [
            torch.optim.lr_scheduler.ConstantLR(optimizer, factor=0.5, total_iters=5),
            torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97),
        ],
        optimizer=optimizer,
    )

    def train_epoch(seed):
        model.train()
        perm = torch.randperm(len(x_train), generator=torch.Generator().manual_seed(seed))
        total = 0.0
        for i in range(0, len(x_train), 128):
            idx = perm[i : i + 128]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step()
        return total / (len(x_train) // 128)

    def accuracy():
        model.eval()
        with torch.no_grad():
            return (model(x_test).argmax(1) == y_test).float().mean().item()

    acc0 = accuracy()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("train_epoch"):
            loss = train_epoch(0)
    names = {e.key for e in prof.key_averages()}
    assert "train_epoch" in names, sorted(names)[:20]
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "train_epoch" in table
    print(f"epoch 0: loss {loss:.3f}")

    assert activations["fc1"].shape == (128, 64) and activations["bn2"].shape == (128, 3)
    assert grad_norms["fc2"] > 0
    assert calls[0] == (len(x_test), 16) and calls[1] == (128, 16)
    for h in handles:
        h.remove()
    n_calls = len(calls)
    model(x_test[:8])
    assert len(calls) == n_calls  # removed hooks no longer run

    # A tensor hook that clips the gradient flowing into the latent weights.
    optimizer.zero_grad()
    clip = model.fc1.weight.register_hook(lambda grad: grad.clamp(-1e-3, 1e-3))
    F.cross_entropy(model(x_train[:64]), y_train[:64]).backward()
    assert model.fc1.weight.grad.abs().max().item() <= 1e-3 + 1e-9
    clip.remove()
    optimizer.zero_grad()

    for epoch in range(1, 4):
        print(f"epoch {epoch}: loss {train_epoch(epoch):.3f} accuracy {accuracy():.3f}")

    # Checkpoint everything, train on, then resume from the checkpoint and train the same.
    buffer = io.BytesIO()
    torch.save(
        {
            "epoch": 4,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": torch.get_rng_state(),
        },
        buffer,
    )
    for epoch in range(4, 8):
        loss = train_epoch(epoch)
        print(
            f"epoch {epoch}: loss {loss:.3f} accuracy {accuracy():.3f}"
            f" lr {scheduler.get_last_lr()[0]:.5f}"
        )
    final_state = {k: v.clone() for k, v in model.state_dict().items()}
    final_lr = scheduler.get_last_lr()
    acc = accuracy()
    assert acc > acc0 + 0.15 and acc > 0.6, (acc0, acc)

    buffer.seek(0)
    ckpt = torch.load(buffer, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    assert ckpt["epoch"] == 4
    for epoch in range(4, 8):
        train_epoch(epoch)
    assert scheduler.get_last_lr() == final_lr
    for k, v in model.state_dict().items():
        assert torch.allclose(v.float(), final_state[k].float(), atol=1e-5), k


if __name__ == "__main__":
    main()
