"""DDP.join() and algorithms.Join on uneven inputs (2 ranks): rank 0 has 3 batches, rank 1
has 5; the result equals a single-process simulation of that schedule."""

import numpy as np

import flambeau as torch
import flambeau.distributed as dist
from flambeau import nn
from flambeau.distributed.algorithms import Join, Joinable, JoinHook
from flambeau.distributed.algorithms.ddp_comm_hooks import default_hooks
from flambeau.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
assert w == 2
B, LR = 4, 0.1
BATCHES = [3, 5]


def make_model():
    torch.manual_seed(7)
    return nn.Sequential(nn.Linear(5, 64), nn.Tanh(), nn.Linear(64, 3))


def batch(rank, step):
    g = np.random.default_rng(100 * rank + step)
    return (torch.from_numpy(g.standard_normal((B, 5)).astype(np.float32)),
            torch.from_numpy(g.standard_normal((B, 3)).astype(np.float32)))  # fmt: skip


def loss_fn(model, x, y):
    return ((model(x) - y) ** 2).mean()


def simulate(divide_by_initial: bool):
    """Each step: the sum of the active ranks' gradients over 2 (or over the active ranks)."""
    ref = make_model()
    for step in range(max(BATCHES)):
        active = [k for k in range(w) if step < BATCHES[k]]
        grads = []
        for k in active:
            ref.zero_grad()
            loss_fn(ref, *batch(k, step)).backward()
            grads.append([p.grad.clone() for p in ref.parameters()])
        divide = w if divide_by_initial else len(active)
        with torch.no_grad():
            for n, p in enumerate(ref.parameters()):
                p -= LR * sum(g[n] for g in grads) / divide
    return ref


for divide_by_initial, hook in ((True, None), (False, None), (True, default_hooks.allreduce_hook)):
    model = make_model()
    ddp = DDP(model, bucket_cap_mb=0.01)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    with ddp.join(divide_by_initial_world_size=divide_by_initial):
        for step in range(BATCHES[r]):
            opt.zero_grad()
            loss_fn(ddp, *batch(r, step)).backward()
            opt.step()
    ref = simulate(divide_by_initial)
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    # Outside the context DDP trains as usual again.
    loss_fn(ddp, *batch(r, 9)).backward()

# throw_on_early_termination: every rank raises once rank 0 runs out (after 1 batch).
ddp = DDP(make_model())
try:
    with ddp.join(throw_on_early_termination=True):
        for step in range([1, 3][r]):
            loss_fn(ddp, *batch(r, step)).backward()
    raise AssertionError("expected RuntimeError")
except RuntimeError as e:
    assert "exhausted" in str(e), e
dist.barrier()


# A Joinable of one's own: a counter all-reduced each step; joined ranks contribute 0.
class Counter(Joinable):
    def __init__(self):
        super().__init__()
        self.total = 0
        self.post = None

    def step(self):
        Join.notify_join_context(self)
        t = torch.ones(1)
        dist.all_reduce(t)
        self.total += int(t.item())

    def join_hook(self, **kwargs):
        counter = self

        class Hook(JoinHook):
            def main_hook(self):
                t = torch.zeros(1)
                dist.all_reduce(t)
                counter.total += int(t.item())

            def post_hook(self, is_last_joiner):
                counter.post = is_last_joiner

        return Hook()

    @property
    def join_device(self):
        return torch.device("cpu")

    @property
    def join_process_group(self):
        return dist.group.WORLD


counter = Counter()
with Join([counter]):
    for _ in range(BATCHES[r]):
        counter.step()
assert counter.total == 3 * 2 + 2 * 1, counter.total  # 2 ranks for 3 steps, then 1
assert counter.post == (r == 1), counter.post
try:
    Join([])
    raise AssertionError("expected ValueError")
except ValueError as e:
    assert "at least one joinable" in str(e)

dist.destroy_process_group()
print(f"rank {r}: WORKER OK", flush=True)
