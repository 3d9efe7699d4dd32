"""What both DataLoader iterators share: the epoch's sampler iterator and base seed,
resuming from a loaded ``state_dict`` (docs/design/data-loading.rst, "Resume"), and
PyTorch's checks of what an iterator gives."""

from __future__ import annotations

import itertools
import warnings

import flambeau
from flambeau.utils.data._utils.fetch import _DatasetKind
from flambeau.utils.data._utils.pin_memory import pin_device

# The random generators an epoch's order depends on: the loader's, its samplers', and the
# global one (used when they have none).


def _generators(loader) -> list:
    found = []
    for g in (
        loader.generator,
        getattr(loader.sampler, "generator", None),
        getattr(getattr(loader.batch_sampler, "sampler", None), "generator", None),
        getattr(loader.batch_sampler, "generator", None),
    ):
        if isinstance(g, flambeau.Generator) and all(g is not h for h in found):
            found.append(g)
    return found


def capture_rng(loader) -> dict:
    return {
        "global": flambeau.get_rng_state(),
        "generators": [g.get_state() for g in _generators(loader)],
    }


class _BaseDataLoaderIter:
    def __init__(self, loader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin_memory_device = pin_device(loader.pin_memory, loader.pin_memory_device)
        self._pin_memory = self._pin_memory_device is not None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._finished = False
        self._start_state = None
        self._num_yielded = 0
        self._skip_fetch = 0
        self._begin_epoch(loader, first=True)

    def _begin_epoch(self, loader, first: bool) -> None:
        """The epoch's sampler iterator (and, the first time, the workers' base seed),
        resuming from a loaded state_dict when there is one."""
        resume, loader._resume_state = loader._resume_state, None
        self._finished = False
        self._num_yielded = 0
        self._skip_fetch = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if resume is None:
            self._start_state = capture_rng(loader)
            self._sampler_iter = self._index_iter()
            if first:
                self._base_seed = int(
                    flambeau.empty((), dtype=flambeau.int64).random_(generator=loader.generator)
                )
            return
        # Repeat the epoch's draws from its starting states. The global generator is the
        # program's: it is put back afterwards (the samplers draw from it only when their
        # iterator starts, which happens here).
        rng = resume["rng"]
        self._start_state = rng
        saved_global = flambeau.get_rng_state()
        flambeau.set_rng_state(rng["global"])
        try:
            for g, state in zip(_generators(loader), rng["generators"]):
                g.set_state(state)
            self._sampler_iter = self._index_iter()
            if first:
                self._base_seed = int(
                    flambeau.empty((), dtype=flambeau.int64).random_(generator=loader.generator)
                )
            n = int(resume.get("num_yielded", 0))
            if self._dataset_kind == _DatasetKind.Map:
                for _ in itertools.islice(self._sampler_iter, n):
                    pass
            else:
                self._skip_fetch = n
            try:
                head = next(self._sampler_iter)
            except StopIteration:
                pass
            else:
                self._sampler_iter = itertools.chain([head], self._sampler_iter)
        finally:
            flambeau.set_rng_state(saved_global)
        self._num_yielded = n

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._begin_epoch(loader, first=first_iter)

    def _index_iter(self):
        """The epoch's batches of indices (or indices, without automatic batching)."""
        return iter(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        try:
            while self._skip_fetch > 0:
                self._next_data()  # resuming an iterable dataset: read and drop
                self._skip_fetch -= 1
            data = self._next_data()
        except StopIteration:
            self._finished = True
            raise
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warn_msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                warn_msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "the documentation of IterableDataset for examples."
                )
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")
