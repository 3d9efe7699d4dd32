"""DDP communication hooks and the bucket rebuild, against single-process gradients."""

import numpy as np

import flambeau as torch
import flambeau.distributed as dist
from flambeau import nn
from flambeau.distributed.algorithms.ddp_comm_hooks import (
    DDPCommHookType,
    default_hooks,
    register_ddp_comm_hook,
)
from flambeau.futures import Future
from flambeau.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
B = 4
mine = slice(r * B, (r + 1) * B)


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(6, 300), nn.Tanh(), nn.Linear(300, 600), nn.Tanh(), nn.Linear(600, 2)
    )


def batch(step):
    g = np.random.default_rng(step)
    return (torch.from_numpy(g.standard_normal((B * w, 6)).astype(np.float32)),
            torch.from_numpy(g.standard_normal((B * w, 2)).astype(np.float32)))  # fmt: skip


def loss_fn(model, x, y):
    return ((model(x) - y) ** 2).mean()


def close(a, b, rel):
    a, b = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=rel, atol=rel * float(np.abs(b).max()))


# 1. Each default hook: gradients, then parameters after an SGD step, equal the averages.
hooks = [
    ("allreduce", default_hooks.allreduce_hook, 1e-6),
    ("fp16", default_hooks.fp16_compress_hook, 2e-3),  # float16: 11 bits of mantissa
    ("bf16", default_hooks.bf16_compress_hook, 1.6e-2),  # bfloat16: 8 bits
    ("fp16 wrapper", default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook), 2e-3),
    ("bf16 wrapper", default_hooks.bf16_compress_wrapper(default_hooks.allreduce_hook), 1.6e-2),
    ("by type", DDPCommHookType.FP16_COMPRESS, 2e-3),
]
for n, (name, hook, tol) in enumerate(hooks):
    ref, model = make_model(n), make_model(n)
    ddp = DDP(model, bucket_cap_mb=0.5)
    if isinstance(hook, DDPCommHookType):
        register_ddp_comm_hook(hook, ddp)  # state None: the default group
    else:
        ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    for step in range(2):
        x, y = batch(10 * n + step)
        opt.zero_grad()
        loss_fn(ddp, x[mine], y[mine]).backward()
        ref_opt.zero_grad()
        loss_fn(ref, x, y).backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p.grad, q.grad, tol)
        opt.step()
        ref_opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q, tol)
    assert len(ddp.reducer.buckets) >= 2, name


# 2. A custom hook that doubles the local gradients (no communication), and GradBucket.
seen = []


def double(state, bucket: dist.GradBucket) -> Future[torch.Tensor]:
    state.append((bucket.index(), bucket.is_last(), bucket.parameters(), bucket.gradients()))
    assert bucket.buffer().numel() == sum(g.numel() for g in bucket.gradients())
    fut = Future()
    fut.set_result(bucket.buffer() * 2)
    return fut


model, local = make_model(20), make_model(20)
ddp = DDP(model, bucket_cap_mb=0.5)
ddp.register_comm_hook(seen, double)
x, y = batch(20)
loss_fn(ddp, x[mine], y[mine]).backward()
loss_fn(local, x[mine], y[mine]).backward()
for p, q in zip(model.parameters(), local.parameters()):
    close(p.grad, q.grad * 2, 1e-6)
buckets = ddp.reducer.buckets
assert [s[0] for s in seen] == list(range(len(buckets)))
assert [s[1] for s in seen] == [False] * (len(buckets) - 1) + [True]
for (_, _, params, grads), b in zip(seen, buckets):
    assert [id(p) for p in params] == [id(p) for _, p in b.members]
    assert [tuple(g.shape) for g in grads] == [tuple(p.shape) for p in params]

# 3. Misuse raises PyTorch's errors.
for bad, kind in ((42, TypeError), (lambda s, bucket: None, None)):
    ddp = DDP(make_model(21))
    if kind is not None:
        try:
            ddp.register_comm_hook(None, bad)
            raise AssertionError("expected TypeError")
        except TypeError as e:
            assert "must be callable" in str(e)
        continue
    ddp.register_comm_hook(None, bad)
    try:
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
        raise AssertionError("expected RuntimeError")
    except RuntimeError as e:
        assert "can only be called once" in str(e)
    try:
        loss_fn(ddp, *[t[mine] for t in batch(22)]).backward()
        raise AssertionError("expected TypeError")
    except TypeError as e:
        assert "must return a flambeau.futures.Future" in str(e)


def annotated(state, bucket: int):
    pass


try:
    DDP(make_model(23)).register_comm_hook(None, annotated)
    raise AssertionError("expected ValueError")
except ValueError as e:
    assert "bucket annotation should be dist.GradBucket" in str(e)


# 4. Buckets are rebuilt once, in the order gradients became ready: here the reverse of
# the registration order (the layer registered first is used last).
class Backwards(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(400, 2)
        self.mid = nn.Linear(400, 400)
        self.inp = nn.Linear(6, 400)

    def forward(self, x):
        return self.out(torch.tanh(self.mid(torch.tanh(self.inp(x)))))


for as_view in (False, True):
    torch.manual_seed(30)
    model = Backwards()
    torch.manual_seed(30)
    ref = Backwards()
    ddp = DDP(model, bucket_cap_mb=0.3, gradient_as_bucket_view=as_view)
    first = [i for i, _ in ddp.reducer.buckets[0].members]
    assert first[:2] == [5, 4], first  # reverse registration: inp's bias and weight
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = batch(40 + step)
        opt.zero_grad(set_to_none=step == 0)
        loss_fn(ddp, x[mine], y[mine]).backward()
        ref_opt.zero_grad()
        loss_fn(ref, x, y).backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p.grad, q.grad, 1e-5)
        opt.step()
        ref_opt.step()
        rebuilt = ddp._get_ddp_logging_data()["has_rebuilt_buckets"]
        assert rebuilt == (step > 0), (step, rebuilt)
    members = [i for i, _ in ddp.reducer.buckets[0].members]
    assert set(members[:2]) == {0, 1}, members  # out's gradients are ready first
    if as_view:
        for i, p in enumerate(model.parameters()):
            assert p.grad.data_ptr() == ddp.reducer.bucket_of[i].views[i].data_ptr()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q, 1e-5)

# find_unused_parameters without static_graph: no rebuild (the order may vary).
ddp = DDP(Backwards(), find_unused_parameters=True)
for step in range(2):
    loss_fn(ddp, *[t[mine] for t in batch(50 + step)]).backward()
assert not ddp._get_ddp_logging_data()["has_rebuilt_buckets"]

dist.destroy_process_group()
print(f"rank {r}: WORKER OK", flush=True)
