"""The reducer: averages gradients over the ranks while backward runs.

A hook after each parameter's gradient accumulation marks it ready; when every
gradient of a bucket is ready the bucket's all-reduce is posted (asynchronously: the
communication thread drives it while backward goes on). Buckets are posted in index
order on every rank, because MPI matches collectives by the order they are posted. A
callback at the end of backward waits for the all-reduces and writes the averages back
to ``.grad`` (or leaves ``.grad`` as a view of the bucket, with gradient_as_bucket_view).
"""

from __future__ import annotations

import time

import flambeau
from flambeau.autograd import engine as _engine

from .. import collectives
from ..reduce_op import ReduceOp
from .buckets import assign

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
        self.buckets = assign(params, bucket_cap_bytes, first_bucket_bytes)
        self.bucket_of = {i: b for b in self.buckets for i, _ in b.members}
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
        bucket = self.bucket_of[index]
        bucket.pending -= 1
        # Post in index order only: every rank must post the same collectives in the same order.
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def _launch(self, bucket) -> None:
        with flambeau.no_grad():
            for i, p in bucket.members:
                view = bucket.views[i]
                g = p.grad
                if i in self.unused or g is None:
                    view.zero_()
                elif g.data_ptr() != view.data_ptr():
                    view.copy_(g)
            # Averaged before the sum (PyTorch's gradient predivision): no pass afterwards.
            if self.divide_by != 1:
                bucket.flat.div_(self.divide_by)
        bucket.launched_at = time.perf_counter()
        bucket.work = collectives.all_reduce(bucket.flat, ReduceOp.SUM, self.pg, async_op=True)
        bucket.launched = True
        self.timeline["launch"].append((bucket.index, bucket.launched_at))

    def finalize(self) -> None:
        """At the end of backward: wait for the all-reduces, write back the averages."""
        self.expect_backward = False
        self.timeline["backward_end"] = time.perf_counter()
        unlaunched = [b for b in self.buckets if not b.launched]
        for b in self.buckets:
            if b.launched:
                b.work.wait()
                self.timeline["done"].append((b.index, b.work._completed_at))
        self.timeline["comm_done"] = time.perf_counter()
        if unlaunched:
            missing = sorted(i for b in unlaunched for i, _ in b.members if i not in self.ready)
            self.error = UNFINISHED_MESSAGE.format(rank=self.pg.rank(), missing=missing)
            return
        globally_unused = self._globally_unused() if self.find_unused else set()
        with flambeau.no_grad():
            for i, p in enumerate(self.params):
                if i in globally_unused:
                    continue
                view = self.bucket_of[i].views[i]
                if self.as_view:
                    if p.grad is None or p.grad.data_ptr() != view.data_ptr():
                        p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)
        self.iterations += 1

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
