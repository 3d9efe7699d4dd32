"""Every collective against a NumPy reference, on any number of ranks."""

import time

import numpy as np

import flambeau as torch
import flambeau.distributed as dist

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"


def data(rank, shape=(3, 4), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) * (rank + 1) + rank).astype(dtype)


everyone = np.stack([data(k) for k in range(w)])

# all_reduce with every op, on float, int and non-contiguous tensors
for op, ref in [
    (dist.ReduceOp.SUM, everyone.sum(0)),
    (dist.ReduceOp.AVG, everyone.mean(0)),
    (dist.ReduceOp.PRODUCT, everyone.prod(0)),
    (dist.ReduceOp.MIN, everyone.min(0)),
    (dist.ReduceOp.MAX, everyone.max(0)),
]:
    t = torch.from_numpy(data(r).copy())
    dist.all_reduce(t, op=op)
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6)
ti = torch.from_numpy(data(r, dtype=np.int64).copy())
dist.all_reduce(ti)
np.testing.assert_array_equal(ti.numpy(), everyone.astype(np.int64).sum(0))
tb = torch.tensor([r % 2 == 0, False])
dist.all_reduce(tb, op=dist.ReduceOp.MAX)
assert tb.tolist() == [True, False]
tn = torch.from_numpy(data(r).copy()).t()  # non-contiguous
dist.all_reduce(tn)
np.testing.assert_allclose(tn.numpy(), everyone.sum(0).T)
th = torch.from_numpy(data(r).copy()).to(torch.bfloat16)
dist.all_reduce(th)
np.testing.assert_allclose(th.float().numpy(), everyone.sum(0), rtol=1e-2)
# zero-copy: the tensor's own memory is what MPI wrote
t = torch.ones(8)
ptr = t.data_ptr()
dist.all_reduce(t)
assert t.data_ptr() == ptr and t.tolist() == [float(w)] * 8

# async all_reduce and Work
t = torch.from_numpy(data(r).copy())
work = dist.all_reduce(t, async_op=True)
assert work.wait() is True and work.is_completed() and work.is_success()
np.testing.assert_allclose(t.numpy(), everyone.sum(0))

# A Work nobody waits on still finishes (its buffer kept alive meanwhile), and the
# callbacks of its future run, with or without a communication thread.
import gc  # noqa: E402

seen = []
for _ in range(20):
    big = torch.ones(1 << 16)
    dropped = dist.all_reduce(big, async_op=True)
    dropped.get_future().then(lambda f: seen.append(f.value()[0][0].item()))
    del big, dropped
    gc.collect()
deadline = time.monotonic() + 10
while time.monotonic() < deadline:  # every rank leaves at the same call
    flag = torch.tensor([int(len(seen) == 20)])
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if flag.item():
        break
assert seen == [float(w)] * 20, seen

# broadcast, reduce
for src in range(w):
    t = torch.from_numpy(data(r).copy())
    dist.broadcast(t, src=src)
    np.testing.assert_array_equal(t.numpy(), data(src))
t = torch.from_numpy(data(r).copy())
dist.reduce(t, dst=w - 1, op=dist.ReduceOp.MAX)
if r == w - 1:
    np.testing.assert_array_equal(t.numpy(), everyone.max(0))
else:
    np.testing.assert_array_equal(t.numpy(), data(r))

# all_gather, all_gather_into_tensor, gather, scatter
out = [torch.zeros(3, 4) for _ in range(w)]
dist.all_gather(out, torch.from_numpy(data(r)))
for k in range(w):
    np.testing.assert_array_equal(out[k].numpy(), data(k))
big = torch.zeros(w * 3, 4)
dist.all_gather_into_tensor(big, torch.from_numpy(data(r)))
np.testing.assert_array_equal(big.numpy(), everyone.reshape(w * 3, 4))
got = [torch.zeros(3, 4) for _ in range(w)] if r == 0 else None
dist.gather(torch.from_numpy(data(r)), got, dst=0)
if r == 0:
    for k in range(w):
        np.testing.assert_array_equal(got[k].numpy(), data(k))
mine = torch.zeros(3, 4)
dist.scatter(mine, [torch.from_numpy(data(k)) for k in range(w)] if r == 1 % w else None, src=1 % w)
np.testing.assert_array_equal(mine.numpy(), data(r))

# reduce_scatter, reduce_scatter_tensor
chunks = [torch.from_numpy(data(r, (2,)) + k) for k in range(w)]
out = torch.zeros(2)
dist.reduce_scatter(out, chunks)
np.testing.assert_allclose(out.numpy(), sum(data(k, (2,)) + r for k in range(w)))
inp = torch.from_numpy(np.concatenate([data(r, (2,)) + k for k in range(w)]))
out = torch.zeros(2)
dist.reduce_scatter_tensor(out, inp, op=dist.ReduceOp.AVG)
np.testing.assert_allclose(out.numpy(), sum(data(k, (2,)) + r for k in range(w)) / w, rtol=1e-6)

# all_to_all, all_to_all_single (equal and uneven splits)
ins = [torch.full((2,), float(10 * r + k)) for k in range(w)]
outs = [torch.zeros(2) for _ in range(w)]
dist.all_to_all(outs, ins)
assert [o.tolist() for o in outs] == [[float(10 * k + r)] * 2 for k in range(w)]
inp = torch.arange(w * 2, dtype=torch.float32) + 100 * r
out = torch.zeros(w * 2)
dist.all_to_all_single(out, inp)
assert out.tolist() == [float(100 * k + 2 * r + j) for k in range(w) for j in range(2)]
in_splits = [k + 1 for k in range(w)]  # rank r sends k+1 rows to rank k
out_splits = [r + 1] * w
inp = torch.full((sum(in_splits), 2), float(r))
out = torch.zeros(sum(out_splits), 2)
dist.all_to_all_single(out, inp, out_splits, in_splits)
assert out[:, 0].tolist() == [float(k) for k in range(w) for _ in range(r + 1)]

# point to point
if r == 0:
    dist.send(torch.arange(5, dtype=torch.float64), dst=w - 1, tag=3)
elif r == w - 1:
    t = torch.zeros(5, dtype=torch.float64)
    assert dist.recv(t, tag=3) == 0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
right, left = (r + 1) % w, (r - 1) % w
recv_buf = torch.zeros(3)
works = dist.batch_isend_irecv(
    [dist.P2POp(dist.isend, torch.full((3,), float(r)), right),
     dist.P2POp(dist.irecv, recv_buf, left)]
)  # fmt: skip
for wk in works:
    wk.wait()
assert recv_buf.tolist() == [float(left)] * 3

# objects
objs = [None] * w
dist.all_gather_object(objs, {"rank": r, "list": list(range(r))})
assert objs == [{"rank": k, "list": list(range(k))} for k in range(w)]
lst = [r, "x", {"a": torch.ones(2) * r}] if r == 0 else [None, None, None]
dist.broadcast_object_list(lst, src=0)
assert lst[0] == 0 and lst[1] == "x" and lst[2]["a"].tolist() == [0.0, 0.0]
gathered = [None] * w if r == 0 else None
dist.gather_object(r * 2, gathered, dst=0)
if r == 0:
    assert gathered == [2 * k for k in range(w)]
got = [None]
dist.scatter_object_list(got, [f"to{k}" for k in range(w)] if r == 0 else None, src=0)
assert got == [f"to{r}"]

# groups: the even ranks, and ranks outside
evens = list(range(0, w, 2))
g = dist.new_group(evens)
if r in evens:
    assert dist.get_world_size(g) == len(evens) and dist.get_rank(g) == evens.index(r)
    t = torch.tensor([float(r)])
    dist.all_reduce(t, group=g)
    assert t.item() == float(sum(evens))
    t = torch.tensor([float(r)])
    dist.broadcast(t, src=evens[-1], group=g)  # src is a global rank
    assert t.item() == float(evens[-1])
    assert dist.get_process_group_ranks(g) == evens
else:
    assert g == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(g) == -1

dist.barrier()
dist.monitored_barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {r}: WORKER OK", flush=True)
