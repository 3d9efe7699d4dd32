"""The default DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks.
default_hooks): plain averaging, and averaging in float16 or bfloat16 to halve the bytes
sent. Each takes a process group as its state (None: the default group)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flambeau
from flambeau.futures import Future

from ... import collectives
from ...grad_bucket import GradBucket
from ...process_group import resolve_group

__all__ = [
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group(process_group):
    group = resolve_group(process_group)
    if group is None:
        raise ValueError("this rank is not in the communication hook's process group")
    return group


def _allreduce_fut(process_group, tensor) -> Future:
    """Average `tensor` over the group in place; a Future of it."""
    group = _group(process_group)
    tensor.div_(group.size())
    work = collectives.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket: GradBucket) -> Future[flambeau.Tensor]:
    """Average the bucket's gradients over the group with one all-reduce: what DDP does
    without a hook (whose predivision it repeats).

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    >>> dist.init_process_group()  # one rank here: the average is the gradient itself
    >>> grads = flambeau.tensor([1.0, 2.0])
    >>> allreduce_hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket: GradBucket) -> Future[flambeau.Tensor]:
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    work = collectives.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])  # back into the bucket's own buffer and dtype
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket: GradBucket) -> Future[flambeau.Tensor]:
    """Cast the bucket to float16, divide by the world size, all-reduce, and cast the
    average back into the bucket's dtype.

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks.default_hooks import fp16_compress_hook
    >>> dist.init_process_group()  # one rank here
    >>> grads = flambeau.tensor([1.0, 1e-8])  # 1e-8 is too small for float16
    >>> fp16_compress_hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 0.])
    >>> dist.destroy_process_group()
    """
    return _compress_hook(flambeau.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket: GradBucket) -> Future[flambeau.Tensor]:
    """fp16_compress_hook with bfloat16 (float32's range, 8 bits of mantissa).

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks.default_hooks import bf16_compress_hook
    >>> dist.init_process_group()  # one rank here
    >>> grads = flambeau.tensor([1.0, 1.001])  # bfloat16 keeps 8 bits of mantissa
    >>> bf16_compress_hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    return _compress_hook(flambeau.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook: Callable[[Any, GradBucket], Future]):
    def wrapper(hook_state, bucket: GradBucket) -> Future[flambeau.Tensor]:
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer

        return fut.then(decompress)

    return wrapper


def fp16_compress_wrapper(
    hook: Callable[[Any, GradBucket], Future[flambeau.Tensor]],
) -> Callable[[Any, GradBucket], Future[flambeau.Tensor]]:
    """Wrap `hook` so that it runs on a float16 copy of the bucket, whose result is
    cast back into the bucket.

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    >>> dist.init_process_group()  # one rank here
    >>> grads = flambeau.tensor([1.0, 1e-8])  # 1e-8 is too small for float16
    >>> hook = hooks.fp16_compress_wrapper(hooks.allreduce_hook)
    >>> hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 0.])
    >>> dist.destroy_process_group()
    """
    wrapper = _compress_wrapper(flambeau.float16, hook)
    wrapper.__name__ = wrapper.__qualname__ = "fp16_compress_wrapper_hook"
    return wrapper


def bf16_compress_wrapper(
    hook: Callable[[Any, GradBucket], Future[flambeau.Tensor]],
) -> Callable[[Any, GradBucket], Future[flambeau.Tensor]]:
    """fp16_compress_wrapper with bfloat16.

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    >>> dist.init_process_group()  # one rank here
    >>> grads = flambeau.tensor([1.0, 1.001])  # bfloat16 keeps 8 bits of mantissa
    >>> hook = hooks.bf16_compress_wrapper(hooks.allreduce_hook)
    >>> hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    wrapper = _compress_wrapper(flambeau.bfloat16, hook)
    wrapper.__name__ = wrapper.__qualname__ = "bf16_compress_wrapper_hook"
    return wrapper
