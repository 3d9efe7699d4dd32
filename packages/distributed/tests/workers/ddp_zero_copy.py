"""DDP with gradients large enough to be reduced in place (no copy through the bucket)
beside small packed ones, against single-process gradients."""

import numpy as np

import flambeau as torch
import flambeau.distributed as dist
from flambeau import nn
from flambeau.distributed.algorithms.ddp_comm_hooks import default_hooks
from flambeau.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
B = 4  # per-rank batch
mine = slice(r * B, (r + 1) * B)


def make_model(seed):
    torch.manual_seed(seed)
    # 300 x 2000 floats (2.4 MB) goes in place; the rest is packed.
    return nn.Sequential(
        nn.Linear(6, 300), nn.Tanh(), nn.Linear(300, 2000), nn.Tanh(), nn.Linear(2000, 2)
    )


def batch(step, rows=B * w):
    g = np.random.default_rng(step)
    return (torch.from_numpy(g.standard_normal((rows, 6)).astype(np.float32)),
            torch.from_numpy(g.standard_normal((rows, 2)).astype(np.float32)))  # fmt: skip


def loss_fn(out, y):
    return ((out - y) ** 2).mean()


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def split(ddp):
    """(in place, packed) parameter indices over the buckets."""
    buckets = ddp.reducer.buckets
    return [i for b in buckets for i, _ in b.direct], [i for b in buckets for i, _ in b.packed]


# 1. The large weight goes in place, the rest is packed; the bucket layout (and what the
# logging data says of it) is the one gradient_as_bucket_view, which packs all, has.
ddp = DDP(make_model(0))
direct, packed = split(ddp)
assert direct == [2], (direct, packed)
assert sorted(packed) == [0, 1, 3, 4, 5], packed
as_view = DDP(make_model(0), gradient_as_bucket_view=True)
assert split(as_view)[0] == []
layout = [[i for i, _ in b.members] for b in ddp.reducer.buckets]
assert layout == [[i for i, _ in b.members] for b in as_view.reducer.buckets], layout
bucket_sizes = ddp._get_ddp_logging_data()["bucket_sizes"]
assert bucket_sizes == as_view._get_ddp_logging_data()["bucket_sizes"]
for b in ddp.reducer.buckets:  # the flat buffers hold only the packed gradients
    assert b.flat.numel() == sum(p.numel() for _, p in b.packed)

# 2. SGD steps equal single-process training on the concatenated batch, with .grad set to
# None or zeroed between steps, through the bucket rebuild after the first iteration.
for set_to_none in (True, False):
    model, ref = make_model(1), make_model(1)
    ddp = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = batch(10 + step)
        opt.zero_grad(set_to_none=set_to_none)
        ref_opt.zero_grad(set_to_none=set_to_none)
        kept = model[2].weight.grad
        loss_fn(ddp(x[mine]), y[mine]).backward()
        loss_fn(ref(x), y).backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p.grad, q.grad)
        if kept is not None:  # reduced where it was
            assert model[2].weight.grad is kept
        info = ddp._get_ddp_logging_data()
        assert info["has_rebuilt_buckets"] == (step > 0)
        assert info["first_launch_before_backward_end_s"] > 0, info
        opt.step()
        ref_opt.step()
    assert split(ddp)[0] == [2]  # still in place after the rebuild
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)

# 3. no_sync: two local backwards accumulate, the third averages them all.
model, ref = make_model(2), make_model(2)
ddp = DDP(model)
for step in range(3):
    x, y = batch(20 + step)
    if step < 2:
        with ddp.no_sync():
            loss_fn(ddp(x[mine]), y[mine]).backward()
    else:
        loss_fn(ddp(x[mine]), y[mine]).backward()
    loss_fn(ref(x), y).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.grad, q.grad)

# 4. A non-contiguous .grad on the last rank only goes through a temporary and keeps its
# layout; the other ranks reduce theirs in place.
model, ref = make_model(3), make_model(3)
ddp = DDP(model)
weight = model[2].weight
if r == w - 1:
    weight.grad = torch.zeros(tuple(reversed(weight.shape))).t()
    assert not weight.grad.is_contiguous()
odd = weight.grad
x, y = batch(30)
loss_fn(ddp(x[mine]), y[mine]).backward()
loss_fn(ref(x), y).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.grad, q.grad)
if r == w - 1:
    assert weight.grad is odd and not odd.is_contiguous()


# 5. find_unused_parameters: a large and a small parameter used on rank 0 only, a large
# one used nowhere. Each rank adds what its .grad holds (here what no_sync accumulated),
# as in PyTorch; the parameter unused everywhere keeps its .grad untouched.
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 800)
        self.big = nn.Linear(800, 800)  # 2.56 MB: in place
        self.side = nn.Linear(800, 2)  # small: packed
        self.never = nn.Linear(800, 800)  # in place, never used
        self.out = nn.Linear(800, 2)

    def forward(self, x, use_big):
        h = torch.tanh(self.inp(x))
        if not use_big:
            return self.out(h)
        h = h + torch.tanh(self.big(h))
        return self.out(h) + self.side(h)


def branchy_loss(model, k, step):
    x, y = batch(40 + step, rows=B * w)
    return loss_fn(
        model(x[k * B : (k + 1) * B], use_big=(k == 0 or step == 0)), y[k * B : (k + 1) * B]
    )


for static_graph in (False, True):
    torch.manual_seed(4)
    net = Branchy()
    torch.manual_seed(4)
    ref = Branchy()
    ddp = DDP(net, find_unused_parameters=True, static_graph=static_graph)
    assert sorted(split(ddp)[0]) == [2, 6]  # big.weight, never.weight
    # Step 0 under no_sync, every rank using the branch; step 1 synced, only rank 0 does.
    with ddp.no_sync():
        branchy_loss(ddp, r, 0).backward()
    net.never.weight.grad = torch.full((800, 800), float(r + 1))  # unused everywhere
    branchy_loss(ddp, r, 1).backward()
    for k in range(w):  # the average over the ranks of what each accumulated
        for step in range(2):
            (branchy_loss(ref, k, step) / w).backward()
    for name, p in net.named_parameters():
        q = dict(ref.named_parameters())[name]
        if name.startswith("never"):
            assert q.grad is None
            continue
        close(p.grad, q.grad)
    close(net.never.weight.grad, torch.full((800, 800), float(r + 1)), 0)
    assert net.never.bias.grad is None
    # A second synced step with .grad zeroed (not None) where rank 0 alone uses the branch.
    net.zero_grad(set_to_none=False)
    ref.zero_grad(set_to_none=False)
    branchy_loss(ddp, r, 2).backward()
    for k in range(w):
        (branchy_loss(ref, k, 2) / w).backward()
    for name, p in net.named_parameters():
        if not name.startswith("never"):
            close(p.grad, dict(ref.named_parameters())[name].grad)

# 6. join() on uneven inputs (rank k has 2 + k batches): the joined ranks shadow the
# in-place reductions too; the result equals a single-process simulation.
LR = 0.1
BATCHES = [2 + k for k in range(w)]


def rank_batch(k, step):
    x, y = batch(100 * k + step, rows=B)
    return x, y


def simulate(divide_by_initial):
    ref = make_model(5)
    for step in range(max(BATCHES)):
        active = [k for k in range(w) if step < BATCHES[k]]
        grads = []
        for k in active:
            ref.zero_grad()
            x, y = rank_batch(k, step)
            loss_fn(ref(x), y).backward()
            grads.append([p.grad.clone() for p in ref.parameters()])
        divide = w if divide_by_initial else len(active)
        with torch.no_grad():
            for n, p in enumerate(ref.parameters()):
                p -= LR * sum(g[n] for g in grads) / divide
    return ref


for divide_by_initial in (True, False):
    model = make_model(5)
    ddp = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    with ddp.join(divide_by_initial_world_size=divide_by_initial):
        for step in range(BATCHES[r]):
            opt.zero_grad()
            x, y = rank_batch(r, step)
            loss_fn(ddp(x), y).backward()
            opt.step()
    ref = simulate(divide_by_initial)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)

# 7. A communication hook takes every gradient packed in the buckets.
model, ref = make_model(6), make_model(6)
ddp = DDP(model)
ddp.register_comm_hook(None, default_hooks.allreduce_hook)
assert split(ddp)[0] == []
x, y = batch(60)
loss_fn(ddp(x[mine]), y[mine]).backward()
loss_fn(ref(x), y).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.grad, q.grad)

dist.destroy_process_group()
print(f"rank {r}: WORKER OK", flush=True)
