"""flambeau.utils.data: datasets, samplers and the DataLoader (PyTorch's torch.utils.data).

The names, arguments, defaults and errors are PyTorch's. Beyond PyTorch: batched fetching
for tensor datasets, worker processes that hand batches over through a shared-memory ring,
``DataLoader.state_dict()``/``load_state_dict()`` to resume mid-epoch, and ``SharedList``
against copy-on-read memory growth in workers. See docs/design/data-loading.rst.
"""

from __future__ import annotations

from flambeau.utils.data._utils.worker import WorkerInfo
from flambeau.utils.data.dataloader import (
    DataLoader,
    _DatasetKind,
    default_collate,
    default_convert,
    get_worker_info,
)
from flambeau.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from flambeau.utils.data.distributed import DistributedSampler
from flambeau.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from flambeau.utils.data.shared import SharedList

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SharedList",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "_DatasetKind",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
