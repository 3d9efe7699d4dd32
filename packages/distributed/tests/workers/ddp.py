"""DDP against single-process training on the concatenated batch."""

import os
import tempfile

import numpy as np

import flambeau as torch
import flambeau.distributed as dist
from flambeau import nn
from flambeau.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
B = 4  # per-rank batch


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(6, 300), nn.Tanh(), nn.Linear(300, 900), nn.Tanh(), nn.Linear(900, 2)
    )


def batch(step):
    g = np.random.default_rng(step)
    return (torch.from_numpy(g.standard_normal((B * w, 6)).astype(np.float32)),
            torch.from_numpy(g.standard_normal((B * w, 2)).astype(np.float32)))  # fmt: skip


def loss_fn(model, x, y):
    return ((model(x) - y) ** 2).mean()


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


mine = slice(r * B, (r + 1) * B)

# 1. Construction broadcasts rank 0's parameters; gradients equal the single process's.
ref = make_model(0)
model = make_model(0 if r == 0 else 100 + r)  # differs on other ranks until DDP syncs
ddp = DDP(model)
for p, q in zip(model.parameters(), ref.parameters()):
    close(p, q, 0)
assert len(ddp.reducer.buckets) >= 2  # a small first bucket, then the rest
# All ranks run on this node: the buckets live in node shared memory unless turned off.
shared = os.environ.get("FLAMBEAU_DDP_SHARED_MEMORY", "1") != "0"
assert all((b.shared is not None) == shared for b in ddp.reducer.buckets)
x, y = batch(0)
loss_fn(ddp, x[mine], y[mine]).backward()
loss_fn(ref, x, y).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.grad, q.grad)
info = ddp._get_ddp_logging_data()
assert info["first_launch_before_backward_end_s"] > 0, info  # overlap: posted before the end
assert list(ddp.state_dict())[0] == "module.0.weight"

# 2. A few SGD steps equal single-process training (gradient_as_bucket_view too).
for as_view in (False, True):
    ref = make_model(1)
    model = make_model(1)
    ddp = DDP(model, gradient_as_bucket_view=as_view, bucket_cap_mb=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = batch(10 + step)
        opt.zero_grad()
        loss_fn(ddp, x[mine], y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref, x, y).backward()
        ref_opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q, 1e-5)

# 3. no_sync: two local backwards then a synced one equal three on the full batches.
ref = make_model(2)
model = make_model(2)
ddp = DDP(model)
for step in range(3):
    x, y = batch(20 + step)
    if step < 2:
        with ddp.no_sync():
            loss_fn(ddp, x[mine], y[mine]).backward()
        if step == 1:  # not yet averaged: this rank's own gradient
            local = make_model(2)
            for s in range(2):
                xs, ys = batch(20 + s)
                loss_fn(local, xs[mine], ys[mine]).backward()
            close(model[0].weight.grad, local[0].weight.grad, 1e-5)
    else:
        loss_fn(ddp, x[mine], y[mine]).backward()
    loss_fn(ref, x, y).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    close(p.grad, q.grad, 1e-5)


# 4. find_unused_parameters: a branch only some ranks use.
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.never = nn.Linear(4, 4)

    def forward(self, x, use_b):
        x = self.a(x)
        return self.b(x) if use_b else x


torch.manual_seed(3)
net = Branchy()
ddp = DDP(net, find_unused_parameters=True)
out = ddp(torch.ones(2, 4), use_b=(r == 0))
out.sum().backward()
assert net.never.weight.grad is None  # unused everywhere: left alone
assert net.b.weight.grad is not None  # used on rank 0: averaged onto every rank
grads = [None] * w
dist.all_gather_object(grads, net.b.weight.grad.tolist())
assert all(g == grads[0] for g in grads)
# without find_unused_parameters the next forward says what went wrong
ddp = DDP(Branchy())
ddp(torch.ones(2, 4), use_b=False).sum().backward()
try:
    ddp(torch.ones(2, 4), use_b=False)
    raise AssertionError("expected the unused-parameter error")
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e)

# 5. join(): uneven inputs (rank k has 2 + k batches) do not hang, and models agree.
torch.manual_seed(4)
model = make_model(4)
ddp = DDP(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
with ddp.join():
    for step in range(2 + r):
        x, y = batch(30 + step)
        opt.zero_grad()
        loss_fn(ddp, x[mine], y[mine]).backward()
        opt.step()
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
everyone = [torch.zeros_like(flat) for _ in range(w)]
dist.all_gather(everyone, flat)
for other in everyone:
    close(other, flat, 0)

# 6. A checkpoint saved by rank 0 and loaded by all; and broadcast from rank 0.
path = os.path.join(
    tempfile.gettempdir(), f"ddp-ckpt-{os.environ.get('PMI_SIZE')}-{os.getppid()}.pt"
)
model = make_model(5 + r)
ddp = DDP(model)
if r == 0:
    torch.save(ddp.state_dict(), path)
dist.barrier()
other = DDP(make_model(50 + r))
other.load_state_dict(torch.load(path))
for p, q in zip(other.parameters(), ddp.parameters()):
    close(p, q, 0)
dist.barrier()
if r == 0:
    os.remove(path)
state = [ddp.module.state_dict() if r == 0 else None]
dist.broadcast_object_list(state, src=0)
fresh = make_model(70 + r)
fresh.load_state_dict(state[0])
for p, q in zip(fresh.parameters(), ddp.module.parameters()):
    close(p, q, 0)

# 7. Node memory is freed once no rank uses it: models come and go, windows do not pile up.
if shared:
    import gc

    from flambeau.distributed.process_group import _default

    windows = _default()._node_state.windows
    held = len(windows)
    for seed in range(3):
        DDP(make_model(seed))
        gc.collect()
    assert len(windows) <= held + 1, (held, len(windows))

# 8. Too little shared memory (a container's small /dev/shm): a warning naming it, then
# the gradients go through MPI's messages, still equal to the single process's.
if shared:
    import warnings

    from flambeau.distributed import node_memory

    real = node_memory._free_shm_bytes
    node_memory._free_shm_bytes = lambda: 0
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            small = DDP(make_model(0))
    finally:
        node_memory._free_shm_bytes = real
    assert all(b.shared is None for b in small.reducer.buckets)
    assert any("--shm-size" in str(w.message) for w in caught), [str(w.message) for w in caught]
    ref = make_model(0)
    x, y = batch(8)
    loss_fn(small, x[mine], y[mine]).backward()
    loss_fn(ref, x, y).backward()
    for p, q in zip(small.parameters(), ref.parameters()):
        close(p.grad, q.grad)

dist.destroy_process_group()
print(f"rank {r}: WORKER OK", flush=True)
