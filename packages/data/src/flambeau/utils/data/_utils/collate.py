"""``default_collate`` and ``default_convert``, as PyTorch's ``_utils/collate.py``.

In a DataLoader worker, tensors are stacked straight into shared memory (the worker's
ring slot, see worker.py): ``_out_allocator`` is set there to a function
``alloc(dtype, shape) -> Tensor``.
"""

from __future__ import annotations

import collections
import copy
import re
import sys
from collections.abc import Callable

import flambeau

np_str_obj_array_pattern = re.compile(r"[SaUO]")

# Set in worker processes: alloc(dtype, shape) -> a tensor in shared memory.
_out_allocator: Callable | None = None


def default_convert(data):
    """Converts each NumPy array in `data` (nested in mappings, named tuples and
    sequences) to a tensor; leaves everything else as it is. The DataLoader's collate_fn
    when automatic batching is off (``batch_size=None``).

    >>> import numpy as np
    >>> from flambeau.utils.data import default_convert
    >>> default_convert([np.array([1, 2]), "text"])
    [tensor([1, 2]), 'text']
    """
    elem_type = type(data)
    if isinstance(data, flambeau.Tensor):
        return data
    elif (
        elem_type.__module__ == "numpy"
        and elem_type.__name__ != "str_"
        and elem_type.__name__ != "string_"
    ):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data  # arrays of strings and objects
        return flambeau.as_tensor(data)
    elif isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    elif isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    elif isinstance(data, tuple):
        return [default_convert(d) for d in data]  # as PyTorch: a list
    elif isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collates a batch by the type of its first element: `collate_fn_map` maps element
    types to functions ``fn(batch, *, collate_fn_map)`` (exact type first, then the first
    key the element is an instance of); mappings, named tuples and sequences are collated
    field by field."""
    if not _numpy_registered:
        _register_numpy()
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {
                        key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                        for key in elem
                    }
                )
                return clone
            return elem_type(
                {
                    key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem
                }
            )
        except TypeError:
            return {
                key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem
            }
    elif isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch))
        )
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(elem) == elem_size for elem in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type(
                [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
            )
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    elem = batch[0]
    if getattr(elem, "is_nested", False):
        raise RuntimeError(
            "Batches of nested tensors are not currently supported by the default collate_fn; "
            "please provide a custom collate_fn to handle them appropriately."
        )
    if elem.layout != flambeau.strided:
        raise RuntimeError(
            "Batches of sparse tensors are not currently supported by the default collate_fn; "
            "please provide a custom collate_fn to handle them appropriately."
        )
    alloc = _out_allocator
    if alloc is not None and elem.device.type == "cpu":
        # In a worker: stack straight into shared memory, so the batch crosses to the
        # main process without a copy.
        out = alloc(elem.dtype, (len(batch), *elem.shape))
        return flambeau.stack(batch, 0, out=out)
    return flambeau.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([flambeau.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    return flambeau.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    return flambeau.tensor(batch, dtype=flambeau.float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    return flambeau.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    return batch


default_collate_fn_map: dict = {flambeau.Tensor: collate_tensor_fn}
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn
# NumPy's types join the map once NumPy is imported (no array exists before), so that a
# program, and each DataLoader worker, that does not use NumPy does not pay its import.
_numpy_registered = False


def _register_numpy() -> None:
    global _numpy_registered
    np = sys.modules.get("numpy")
    if np is None or _numpy_registered:
        return
    _numpy_registered = True
    # Right after Tensor, as in PyTorch's map: numpy.float64 is also a float.
    rest = list(default_collate_fn_map.items())
    default_collate_fn_map.clear()
    default_collate_fn_map[rest[0][0]] = rest[0][1]
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
    default_collate_fn_map.update(rest[1:])


_register_numpy()


def default_collate(batch):
    """Puts a batch of samples together, adding a first dimension of the batch's size:

    - tensors → a tensor (stacked); NumPy arrays and scalars → tensors;
    - ``float`` → a float64 tensor; ``int`` → an int64 tensor; ``str``/``bytes`` → kept;
    - ``Mapping[K, V_i]`` → ``Mapping[K, default_collate([V_1, V_2, ...])]``;
    - ``NamedTuple`` → the same named tuple of collated fields;
    - ``Sequence[V1_i, V2_i, ...]`` → ``[default_collate([V1_1, V1_2, ...]), ...]`` (a
      tuple gives a list, as in PyTorch).

    Anything else raises PyTorch's TypeError. The DataLoader's default collate_fn.

    >>> from flambeau.utils.data import default_collate
    >>> default_collate([flambeau.tensor([1, 2]), flambeau.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    >>> default_collate([(0, 1.5), (1, 2.5)])  # a list of the batched fields
    [tensor([0, 1]), tensor([1.5000, 2.5000], dtype=flambeau.float64)]
    >>> default_collate([{"x": 1}, {"x": 2}])
    {'x': tensor([1, 2])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
