"""The reducer: averages gradients over the ranks while backward runs.

A hook after each parameter's gradient accumulation marks it ready; when every
gradient of a bucket is ready the bucket's all-reduce is posted (asynchronously: the
communication thread drives it while backward goes on). Buckets are posted in index
order on every rank, because MPI matches collectives by the order they are posted. A
callback at the end of backward waits for the all-reduces and writes the averages back
to ``.grad`` (or leaves ``.grad`` as a view of the bucket, with gradient_as_bucket_view).

Large gradients skip the flat buffer: with the built-in reduction and without
gradient_as_bucket_view, a gradient of at least ZERO_COPY_MIN_BYTES is divided and
all-reduced where it is, saving the copy into the bucket and the copy back. Which
gradients go that way depends only on the parameters' sizes and the bucket layout, the
same on every rank, so every rank posts the same collectives in the same order; a rank
without such a gradient (None), or whose gradient must not change in place (unused
here, with history, of another dtype), reduces a temporary in its place.

A communication hook (register_comm_hook) replaces the built-in "divide, then all-reduce
with SUM": it receives each full bucket as a GradBucket and returns a Future of the
reduced flat tensor. After the first complete iteration the buckets are rebuilt once, in
the order the gradients became ready (rank 0's order, for every rank), as PyTorch does
unless find_unused_parameters without static_graph makes that order vary.
"""

from __future__ import annotations

import time
import warnings

import flambeau
from flambeau.autograd import engine as _engine
from flambeau.futures import Future

from .. import collectives, node_memory
from ..grad_bucket import GradBucket
from ..reduce_op import ReduceOp
from .buckets import Bucket, assign

# Gradients this large are reduced in place. Measured with MPICH on 2 ranks of one
# machine: the copy into the bucket and back costs about 70 us a MiB; the separate
# all-reduce about 50 us more, or 170 us when it splits a bucket's megabytes in two (an
# all-reduce of 1 MiB takes 0.2 ms, one of 2 MiB hardly more). 1 MiB gradients reduced
# in place made a DDP step slower, 2 MiB ones faster (by 0.2 ms of 16 with one, 1.3 ms
# of 35 with three).
ZERO_COPY_MIN_BYTES = 2 * 1024 * 1024

UNFINISHED_MESSAGE = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `flambeau.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.\n"
    "Parameter indices which did not receive grad for rank {rank}: {missing}"
)


def _tensors_in(obj, out: list) -> list:
    if isinstance(obj, flambeau.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def reachable_leaves(outputs) -> set[int]:
    """ids of the leaf tensors the autograd graph of `outputs` reaches."""
    seen, leaves = set(), set()
    stack = [t.grad_fn for t in _tensors_in(outputs, []) if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)
    return leaves


class Reducer:
    def __init__(
        self,
        params,
        pg,
        bucket_cap_bytes: int,
        first_bucket_bytes: int,
        gradient_as_bucket_view: bool,
        find_unused_parameters: bool,
        static_graph: bool,
    ):
        self.params = params
        self.pg = pg
        self.world = pg.size()
        self.as_view = gradient_as_bucket_view
        self.find_unused = find_unused_parameters
        self.static_graph = static_graph
        self.bucket_cap_bytes = bucket_cap_bytes
        self.first_bucket_bytes = first_bucket_bytes
        self.comm_hook = None
        self.comm_hook_state = None
        # Buckets in memory the node's ranks share (node_memory.py), when they all run on
        # one node: reduced there, not through MPI's messages. Not with gradient views
        # into the buckets (a .grad must not outlive its window) or a communication hook.
        self.shared = not gradient_as_bucket_view and node_memory.usable(pg)
        self._set_buckets(self._assign())
        self.rebuilt = False
        self.ready_order: list[int] = []  # the last complete iteration's, until rebuilt
        self._order: list[int] = []
        self.divide_by = self.world
        self.expect_backward = False
        self.started = False
        self.ready: set[int] = set()
        self.unused: set[int] = set()
        self._static_unused: set[int] | None = None
        self.next_bucket = 0
        self.error: str | None = None
        self.timeline: dict = {}
        self.iterations = 0
        self._hooks = [
            p.register_post_accumulate_grad_hook(lambda p, i=i: self._grad_ready(i))
            for i, p in enumerate(params)
        ]

    def _direct_min_bytes(self) -> int | None:
        """The size from which a gradient is reduced in place; None when none is: a
        communication hook gets whole flat buckets, and with gradient_as_bucket_view
        the gradients already live in the buckets."""
        if self.comm_hook is not None or self.as_view or self.shared:
            return None
        return ZERO_COPY_MIN_BYTES

    def _assign(self, order=None) -> list[Bucket]:
        return assign(
            self.params,
            self.bucket_cap_bytes,
            self.first_bucket_bytes,
            order,
            self._direct_min_bytes(),
        )

    def _set_buckets(self, buckets) -> None:
        if self.shared:  # collective: every rank sets the same buckets at the same call
            try:
                memory = node_memory.SharedBuffers(
                    self.pg, [(b.flat.numel(), b.flat.dtype) for b in buckets]
                )
            except node_memory.NoRoom as e:  # every rank agrees; the buckets stay private
                warnings.warn(str(e), RuntimeWarning, stacklevel=2)
                self.shared = False
            else:
                for k, b in enumerate(buckets):
                    b.place(memory.mine[k])
                    b.shared = (memory, k)
        self.buckets = buckets
        self.bucket_of = {i: b for b in buckets for i, _ in b.members}

    def register_comm_hook(self, state, hook) -> None:
        if self.comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self.comm_hook, self.comm_hook_state = hook, state
        # The hook takes every gradient packed, in a bucket of its own memory.
        if self.shared or any(b.direct for b in self.buckets):
            self.shared = False
            self._set_buckets([Bucket(b.index, b.members) for b in self.buckets])

    # bucket rebuild
    def should_rebuild(self) -> bool:
        return not self.rebuilt and (self.static_graph or not self.find_unused)

    def rebuild_buckets(self) -> bool:
        """Once, before the forward after the first complete iteration: buckets in the
        order rank 0's gradients became ready. Collective (a broadcast) when it happens;
        every rank decides alike, having finished the same iterations."""
        if not self.should_rebuild() or not self.ready_order:
            return False
        order = flambeau.tensor(self.ready_order, dtype=flambeau.int64)
        collectives.broadcast(order, self.pg.global_rank(0), group=self.pg)
        self._set_buckets(self._assign(order.tolist()))
        if self.as_view:
            with flambeau.no_grad():
                for i, p in enumerate(self.params):
                    if p.grad is not None:
                        view = self.bucket_of[i].views[i]
                        view.copy_(p.grad)
                        p.grad = view
        self.rebuilt = True
        self.ready_order = self._order = []
        return True

    def push_all_params(self) -> None:
        """A joined rank that never finished an iteration takes the present bucket order,
        so that it rebuilds with the others (PyTorch's _push_all_rebuilt_params)."""
        if self.should_rebuild() and not self.ready_order:
            self.ready_order = [i for b in self.buckets for i, _ in b.members]

    def remove_hooks(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks = []

    # forward
    def prepare_for_backward(self, outputs) -> None:
        if self.error is not None:
            message, self.error = self.error, None
            raise RuntimeError(message)
        self.expect_backward = True
        self.started = False
        self.ready = set()
        self._order = []
        self.next_bucket = 0
        for b in self.buckets:
            b.reset()
        self.unused = set()
        if self.find_unused:
            if self.static_graph and self._static_unused is not None:
                self.unused = set(self._static_unused)
            else:
                used = reachable_leaves(outputs)
                self.unused = {i for i, p in enumerate(self.params) if id(p) not in used}
                if self.static_graph:
                    self._static_unused = set(self.unused)

    # backward
    def _grad_ready(self, index: int) -> None:
        if not self.expect_backward or index in self.ready:
            return
        if not self.started:
            self.started = True
            self.timeline = {"backward_start": time.perf_counter(), "launch": [], "done": []}
            task = _engine.current_task()
            if task is not None:
                task.callbacks.append(self.finalize)
            for i in self.unused:
                self._mark(i)
        self._mark(index)

    def _mark(self, index: int) -> None:
        if index in self.ready:
            return
        self.ready.add(index)
        if not self.rebuilt:
            self._order.append(index)
        bucket = self.bucket_of[index]
        bucket.pending -= 1
        # Post in index order only: every rank must post the same collectives in the same order.
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def _launch(self, bucket) -> None:
        # The built-in reduction averages before the sum (PyTorch's gradient
        # predivision), in the same pass that fills the bucket; a hook gets the sums. A
        # bucket in node memory is averaged as it is reduced.
        scale = self.divide_by if self.comm_hook is None and not bucket.shared else 1
        bucket.launched_at = time.perf_counter()
        with flambeau.no_grad():
            # The large gradients first, in member order (shadow_backward posts alike).
            bucket.direct_work = [self._reduce_in_place(i, p, scale) for i, p in bucket.direct]
            for i, p in bucket.packed:
                view = bucket.views[i]
                g = p.grad
                # An unused parameter adds what its .grad holds (what no_sync accumulated),
                # as in PyTorch; no .grad adds zeros.
                if g is None:
                    view.zero_()
                elif g.data_ptr() == view.data_ptr():
                    if scale != 1:
                        view.div_(scale)
                elif scale != 1:
                    flambeau.div(g, scale, out=view)
                else:
                    view.copy_(g)
        if bucket.packed:
            bucket.work = self._communicate(bucket, bucket.flat, bucket.views)
        bucket.launched = True
        self.timeline["launch"].append((bucket.index, bucket.launched_at))

    def _reduce_in_place(self, index: int, p, scale):
        """Post the all-reduce of a large gradient, divided, where it is (a non-contiguous
        one through the collective's own contiguous copy); or of a temporary standing for
        it, which finalize writes back: zeros when there is no gradient; a copy when the
        parameter is unused here (unused everywhere, its .grad must stay as it was), when
        .grad has history (create_graph) or another dtype than the parameter (every rank
        must reduce the same dtype). Returns (index, Work, temporary or None)."""
        g = p.grad
        temp = None
        if g is None:
            temp = flambeau.zeros(tuple(p.shape), dtype=p.dtype)
        elif index in self.unused or g.requires_grad or g.dtype != p.dtype:
            temp = flambeau.empty(tuple(p.shape), dtype=p.dtype)
            if scale != 1:
                flambeau.div(g, scale, out=temp)
            else:
                temp.copy_(g)
        elif scale != 1:
            g.div_(scale)
        target = g if temp is None else temp
        work = collectives.all_reduce(target, ReduceOp.SUM, self.pg, async_op=True)
        return index, work, temp

    def _communicate(self, bucket, flat, views):
        """Post the reduction of `flat` (bucket's data, already divided, or zeros for a
        joined rank): the built-in sum or the communication hook. Returns what _await
        takes."""
        if bucket.shared is not None:  # `flat` is the bucket's own, in node memory
            memory, k = bucket.shared
            return node_memory.all_reduce(self.pg, memory, k, self.divide_by, async_op=True)
        if self.comm_hook is None:
            return collectives.all_reduce(flat, ReduceOp.SUM, self.pg, async_op=True)
        grad_bucket = GradBucket(
            bucket.index,
            flat,
            [views[i] for i, _ in bucket.members],
            [p for _, p in bucket.members],
            bucket.index == len(self.buckets) - 1,
        )
        future = self.comm_hook(self.comm_hook_state, grad_bucket)
        if not isinstance(future, Future):
            raise TypeError(
                "Communication hook must return a flambeau.futures.Future (of the bucket's "
                f"reduced tensor), got {type(future).__name__}"
            )
        return future

    def _await(self, work, flat) -> None:
        """Wait for a bucket's reduction; a hook's result lands in `flat`."""
        if self.comm_hook is None:
            work.wait()
            return
        result = work.wait()
        if not isinstance(result, flambeau.Tensor):
            raise RuntimeError(
                "The communication hook's Future must hold a tensor (the bucket's reduced "
                f"flat buffer), got {type(result).__name__}"
            )
        if result.numel() != flat.numel():
            raise RuntimeError(
                f"The communication hook returned a tensor of {result.numel()} elements for a "
                f"bucket of {flat.numel()}"
            )
        if result.data_ptr() != flat.data_ptr():
            with flambeau.no_grad():
                flat.copy_(result.reshape(-1))

    def shadow_backward(self) -> None:
        """A joined rank's side of one backward of the ranks still training: each
        bucket's reductions (in-place ones and hook included) on zeros, then the
        unused-parameter vote."""
        posted = []
        for bucket in self.buckets:
            for _, p in bucket.direct:  # as _launch: the large gradients first
                zeros = flambeau.zeros(tuple(p.shape), dtype=p.dtype)
                work = collectives.all_reduce(zeros, ReduceOp.SUM, self.pg, async_op=True)
                posted.append((work, None))
            if not bucket.packed:
                continue
            if bucket.shared is not None:  # this rank adds zeros in its own segment
                bucket.flat.zero_()
                posted.append((self._communicate(bucket, bucket.flat, bucket.views), bucket.flat))
                continue
            zeros = flambeau.zeros_like(bucket.flat)
            views, offset = {}, 0
            for i, p in bucket.packed:
                views[i] = zeros[offset : offset + p.numel()].view(tuple(p.shape))
                offset += p.numel()
            posted.append((self._communicate(bucket, zeros, views), zeros))
        for work, zeros in posted:
            if zeros is None:
                work.wait()
            else:
                self._await(work, zeros)
        if self.find_unused:
            # Unused here, so "unused everywhere" depends on the others' votes.
            flag = flambeau.ones(len(self.params), dtype=flambeau.uint8)
            collectives.all_reduce(flag, ReduceOp.MIN, self.pg)
        self.push_all_params()

    def finalize(self) -> None:
        """At the end of backward: wait for the all-reduces, write back the averages."""
        self.expect_backward = False
        self.timeline["backward_end"] = time.perf_counter()
        unlaunched = [b for b in self.buckets if not b.launched]
        for b in self.buckets:
            if b.launched:
                works = [work for _, work, _ in b.direct_work]
                for work in works:
                    work.wait()
                if b.work is not None:
                    self._await(b.work, b.flat)
                    works.append(b.work)
                done = [getattr(w, "_completed_at", None) for w in works]
                self.timeline["done"].append((b.index, None if None in done else max(done)))
        self.timeline["comm_done"] = time.perf_counter()
        if unlaunched:
            missing = sorted(i for b in unlaunched for i, _ in b.members if i not in self.ready)
            self.error = UNFINISHED_MESSAGE.format(rank=self.pg.rank(), missing=missing)
            return
        globally_unused = self._globally_unused() if self.find_unused else set()
        with flambeau.no_grad():
            for b in self.buckets:
                for i, _, temp in b.direct_work:  # the others were reduced in .grad itself
                    if temp is not None and i not in globally_unused:
                        self._write_back(self.params[i], temp, owned=True)
                for i, p in b.packed:
                    if i not in globally_unused:
                        self._write_back(p, b.views[i], owned=False)
        if not self.rebuilt:
            self.ready_order = self._order
        self.iterations += 1

    def _write_back(self, p, reduced, owned: bool) -> None:
        """Make p.grad the reduced gradient (`owned`: a temporary p.grad may keep)."""
        if self.as_view:
            if p.grad is None or p.grad.data_ptr() != reduced.data_ptr():
                p.grad = reduced
        elif p.grad is None:
            p.grad = reduced if owned else reduced.clone()
        else:
            p.grad.copy_(reduced)

    def _globally_unused(self) -> set[int]:
        if not self.unused:
            local = flambeau.zeros(len(self.params), dtype=flambeau.uint8)
        else:
            local = flambeau.ones(len(self.params), dtype=flambeau.uint8)
            for i in range(len(self.params)):
                if i not in self.unused:
                    local[i] = 0
        # MIN over "unused here": unused everywhere.
        collectives.all_reduce(local, ReduceOp.MIN, self.pg)
        return {i for i, v in enumerate(local.tolist()) if v}
