"""Samplers: PyTorch's ``torch.utils.data.sampler`` with the same names, errors and defaults."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import flambeau

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class of samplers: ``__iter__`` yields dataset keys (or lists of them), and
    ``__len__``, when defined, says how many.

    >>> from flambeau.utils.data import DataLoader, Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, data):
    ...         self.n = len(data)
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    >>> list(Backwards(range(4)))
    [3, 2, 1, 0]
    >>> list(DataLoader(range(4), sampler=Backwards(range(4)), batch_size=2))
    [tensor([3, 2]), tensor([1, 0])]
    """

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1.

    >>> from flambeau.utils.data import SequentialSampler
    >>> list(SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def _chunks(self):
        # The same indices as __iter__, as sliceable runs (BatchSampler's fast path).
        yield range(len(self.data_source))

    def _tensor_chunks(self):
        yield flambeau.arange(len(self.data_source))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator():
    # PyTorch's: a generator seeded from the global one, so that manual_seed repeats it.
    seed = int(flambeau.empty((), dtype=flambeau.int64).random_().item())
    generator = flambeau.Generator()
    generator.manual_seed(seed)
    return generator


class RandomSampler(Sampler[int]):
    """Random indices: a permutation (or `num_samples` of them, in whole permutations
    and a part of one), or `num_samples` drawn with replacement.

    >>> from flambeau.utils.data import RandomSampler
    >>> sampler = RandomSampler(range(5))
    >>> len(sampler), sorted(sampler)  # every index once, in a random order
    (5, [0, 1, 2, 3, 4])
    >>> len(list(RandomSampler(range(5), replacement=True, num_samples=8)))
    8
    """

    data_source: Sized
    replacement: bool

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, "
                f"but got num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        for chunk in self._chunks():
            yield from chunk

    def _chunks(self):
        # The indices in runs, drawn as PyTorch draws them (BatchSampler slices the runs
        # instead of taking the indices one by one).
        for chunk in self._tensor_chunks():
            yield chunk.tolist()

    def _tensor_chunks(self):
        # The runs as int64 tensors (the DataLoader's fast path gathers with them).
        n = len(self.data_source)
        generator = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield flambeau.randint(
                    high=n, size=(32,), dtype=flambeau.int64, generator=generator
                )
            yield flambeau.randint(
                high=n, size=(self.num_samples % 32,), dtype=flambeau.int64, generator=generator
            )
        else:
            for _ in range(self.num_samples // n):
                yield flambeau.randperm(n, generator=generator)
            rest = self.num_samples % n
            if rest or self.generator is not None:
                # PyTorch draws one more permutation for the rest. When it is empty and
                # the generator is the epoch's own, nothing can see that draw: skipped.
                yield flambeau.randperm(n, generator=generator)[:rest]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order, without replacement.

    >>> from flambeau.utils.data import SubsetRandomSampler
    >>> sampler = SubsetRandomSampler([10, 11, 12])
    >>> len(sampler), sorted(sampler)  # the given indices, in a random order
    (3, [10, 11, 12])
    """

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in flambeau.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices in ``[0, len(weights))`` drawn with probability proportional
    to `weights` (with or without replacement).

    >>> from flambeau.utils.data import WeightedRandomSampler
    >>> sampler = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], num_samples=6)
    >>> indices = list(sampler)  # 3 three times as likely as 1; never 0 or 2
    >>> len(indices), set(indices) <= {1, 3}
    (6, True)
    """

    weights: flambeau.Tensor
    num_samples: int
    replacement: bool

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator=None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = flambeau.as_tensor(weights, dtype=flambeau.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rand_tensor = flambeau.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of `batch_size` (the last one shorter
    unless `drop_last`).

    >>> from flambeau.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        if type(self.sampler).__iter__ in _CHUNKED:
            # RandomSampler and SequentialSampler give their indices in runs: slice them.
            yield from _batches_of(self.sampler._chunks(), self.batch_size, self.drop_last)
            return
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch_droplast in zip(*args):
                yield [*batch_droplast]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size  # type: ignore[arg-type]
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size  # type: ignore[arg-type]


_CHUNKED = (RandomSampler.__iter__, SequentialSampler.__iter__)


def _batches_of(chunks, batch_size: int, drop_last: bool, tensors: bool = False):
    """Consecutive batches of `batch_size` from the concatenation of `chunks`: lists, or
    (`tensors`) slices of the chunks as they are (int64 tensors, or int64 memoryviews),
    joined by a copy only across chunks."""
    take = (lambda c: c) if tensors else list
    join = _join if tensors else (lambda a, b: a + list(b))
    buf = None
    for chunk in chunks:
        n = len(chunk)
        i = 0
        if buf is not None:
            need = batch_size - len(buf)
            buf = join(buf, chunk[:need])
            if len(buf) < batch_size:
                continue
            yield buf
            buf = None
            i = need
        if tensors:
            while i + batch_size <= n:
                yield chunk[i : i + batch_size]
                i += batch_size
        else:
            while i + batch_size <= n:
                yield list(chunk[i : i + batch_size])
                i += batch_size
        buf = take(chunk[i:]) if i < n else None
    if buf is not None and not drop_last:
        yield buf


def _join(a, b):
    if isinstance(a, flambeau.Tensor):
        return flambeau.cat([a, b])
    return memoryview(b"".join((a, b))).cast("q")


def _int64_tensor_over(buf: bytearray):
    """A 1-D int64 tensor over `buf`'s bytes (native int64; no copy, no numpy), which it
    keeps alive: `buf` must not be resized."""
    storage = flambeau.UntypedStorage._from_buffer(buf, buf, False)
    return storage._view(flambeau.int64, 0, [len(buf) // 8], [1])


_COPY_PIECE = 32768  # the core's grain: elementwise work up to it runs inline


class _Int64Views:
    """Turns int64 tensor chunks into memoryviews of format ``q`` (native int64): slicing
    one costs no tensor, and its slices go to the DataLoader's workers as raw bytes. Two
    buffers are used in turn and kept from epoch to epoch (no fresh pages to fault in):
    a chunk's tail may still be joined with the next chunk, never with a later one."""

    def __init__(self) -> None:
        self._buffers = [bytearray(), bytearray()]
        self._turn = 0

    def __call__(self, chunk) -> memoryview:
        n = len(chunk)
        self._turn ^= 1
        buf = self._buffers[self._turn]
        if len(buf) < 8 * n:
            buf = self._buffers[self._turn] = bytearray(8 * n)
        if n:
            out = flambeau.UntypedStorage._from_buffer(buf, buf, False)._view(
                flambeau.int64, 0, [n], [1]
            )
            # In pieces the core copies on the calling thread: a larger copy goes to the
            # thread pool, whose wake-up costs far more than copying (ms on a busy host).
            for i in range(0, n, _COPY_PIECE):
                out[i : i + _COPY_PIECE].copy_(chunk[i : i + _COPY_PIECE])
        return memoryview(buf).cast("q")[:n]


def _index_batches(batch_sampler, raw=None):
    """The batches of `batch_sampler` as int64 index tensors, or (`raw`, an `_Int64Views`)
    as int64 memoryviews, which the DataLoader's workers get as raw bytes: the same as its
    lists (the DataLoader's path for datasets that gather a batch at once), or None when
    it does not slice its sampler's runs."""
    sampler = getattr(batch_sampler, "sampler", None)
    if type(batch_sampler).__iter__ is not BatchSampler.__iter__ or (
        type(sampler).__iter__ not in _CHUNKED
    ):
        return None
    chunks = sampler._tensor_chunks()
    if raw is not None:
        chunks = map(raw, chunks)
    return _batches_of(chunks, batch_sampler.batch_size, batch_sampler.drop_last, True)
