"""The DataLoader's argument checks: PyTorch's errors for bad and conflicting arguments,
and its warning for more workers than CPUs."""

from __future__ import annotations

import multiprocessing as python_multiprocessing
import os


def check_worker_args(num_workers, timeout, prefetch_factor, persistent_workers):
    """Checks the arguments of worker processes; returns `prefetch_factor` with its
    default (2 with workers)."""
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; "
            "use num_workers=0 to disable multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing."
            "let num_workers > 0 to enable multiprocessing, otherwise set "
            "prefetch_factor to None."
        )
    elif num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def check_sampling_args(iterable, shuffle, sampler, batch_sampler, batch_size, drop_last):
    """Checks how batches are drawn (`iterable`: the dataset is an IterableDataset);
    returns ``(shuffle, batch_size, drop_last)`` as the loader keeps them."""
    if iterable:
        if shuffle not in {False, None}:
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified shuffle option, "
                f"but got shuffle={shuffle}"
            )
        if sampler is not None:
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified sampler option, "
                f"but got sampler={sampler}"
            )
        elif batch_sampler is not None:
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified "
                f"batch_sampler option, but got batch_sampler={batch_sampler}"
            )
    else:
        shuffle = bool(shuffle)

    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")

    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError(
                "batch_sampler option is mutually exclusive "
                "with batch_size, shuffle, sampler, and "
                "drop_last"
            )
        batch_size = None
        drop_last = False
    elif batch_size is None:
        if drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching "
                "and is mutually exclusive with drop_last"
            )
    return shuffle, batch_size, drop_last


def check_multiprocessing_context(multiprocessing_context, num_workers):
    """Checks `multiprocessing_context`; a start method's name becomes
    flambeau.multiprocessing's context for it."""
    if multiprocessing_context is None:
        return None
    if num_workers <= 0:
        raise ValueError(
            "multiprocessing_context can only be used with "
            "multi-process loading (num_workers > 0), but got "
            f"num_workers={num_workers}"
        )
    if isinstance(multiprocessing_context, str):
        import flambeau.multiprocessing as _mp

        valid_start_methods = _mp.get_all_start_methods()
        if multiprocessing_context not in valid_start_methods:
            raise ValueError(
                "multiprocessing_context option "
                f"should specify a valid start method in {valid_start_methods!r}, "
                f"but got multiprocessing_context={multiprocessing_context!r}"
            )
        multiprocessing_context = _mp.get_context(multiprocessing_context)
    if not isinstance(multiprocessing_context, python_multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context "
            "object or a string specifying the start method, but got "
            f"multiprocessing_context={multiprocessing_context}"
        )
    return multiprocessing_context


def _cpu_count() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def worker_number_warning(num_workers) -> str | None:
    """PyTorch's warning when more workers are asked for than this process may use
    CPUs, or None."""
    if not num_workers:
        return None
    suggest = _cpu_count()
    if suggest is not None and num_workers <= suggest:
        return None
    cpuset_checked = hasattr(os, "sched_getaffinity")
    if suggest is not None:
        suggested = (
            f"Our suggested max number of worker in current system is {suggest}"
            f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
            "which is smaller than what this DataLoader is going to create."
        )
    else:
        suggested = (
            "DataLoader is not able to compute a suggested max number of worker in current system."
        )
    return (
        f"This DataLoader will create {num_workers} worker processes in total. "
        f"{suggested} Please be aware that excessive worker creation might get "
        "DataLoader running slow or even freeze, lower the worker number to avoid "
        "potential slowness/freeze if necessary."
    )
