"""safetensors files of flambeau tensors, with the API of ``safetensors.torch``.

A program ports by changing its import::

    from safetensors.torch import load_file, save_file   # PyTorch
    from flambeau.safetensors import load_file, save_file  # flambeau

(``flambeau.load("model.safetensors")`` works too, as ``torch.load`` does.)
This module sits at ``flambeau.safetensors`` to mirror ``safetensors.torch``
one for one: ``flambeau.serialization`` is flambeau's own format, and PyTorch
has no ``torch.safetensors`` it could clash with.

Writing goes through the ``safetensors`` package, the format's reference
implementation (``pip install safetensors``, or the ``safetensors`` extra of
flambeau-tensor-core). Reading parses the format's documented layout itself
(an 8-byte little-endian header size, a JSON header giving each tensor's
dtype, shape and ``[begin, end)`` offsets in the byte buffer that follows,
then the buffer), checked as the reference implementation checks it. So
reading needs no package, reads bfloat16 (which safetensors' NumPy API cannot
return), and maps the file rather than reading it: ``load_file`` returns
copy-on-write views of the file wherever a tensor's elements are aligned.
"""

from __future__ import annotations

import json
import os
import struct
import sys

import flambeau as F
from flambeau import serialization as _S

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "save_model", "load_model"]
__all__ += ["SafetensorError"]

_MAX_HEADER = 100_000_000  # as the reference implementation: a larger header is refused
# The format's dtype names: flambeau's dtype, and the element size of those it lacks.
_DTYPES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "int16",
    "I32": "int32",
    "I64": "int64",
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
    "C64": "complex64",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F8_E8M0": "float8_e8m0fnu",
}
_CODES = {name: code for code, name in _DTYPES.items()}


class SafetensorError(RuntimeError):
    """A file or buffer that is not valid safetensors.

    >>> from flambeau.safetensors import SafetensorError, load
    >>> try:
    ...     load(b"not safetensors")
    ... except SafetensorError as e:
    ...     print(isinstance(e, RuntimeError))
    True
    """


# ---- reading ------------------------------------------------------------------------------


class _Entry:
    __slots__ = ("code", "shape", "begin", "end")

    def __init__(self, code, shape, begin, end):
        self.code, self.shape, self.begin, self.end = code, shape, begin, end


def _itemsize(code) -> int | None:
    if not isinstance(code, str):
        return None
    if code in _DTYPES:
        return getattr(F, _DTYPES[code]).itemsize
    return None


def _parse(head: bytes, total: int, source) -> tuple[int, dict[str, _Entry], dict | None]:
    """(where the buffer starts, the tensors by name, the metadata) of a file of total bytes.

    head holds at least the file's first min(total, 8 + header size) bytes.
    """
    if total < 8:
        raise SafetensorError(f"{source}: header too small: not a safetensors file")
    (n,) = struct.unpack("<Q", head[:8])
    if n > _MAX_HEADER:
        raise SafetensorError(f"{source}: header too large ({n} bytes)")
    if 8 + n > total:
        raise SafetensorError(f"{source}: header of {n} bytes runs past the end of the file")
    try:
        header = json.loads(
            bytes(head[8 : 8 + n]).decode("utf-8"),
            object_pairs_hook=_S._unique_keys,
            parse_constant=_S._no_constant,
        )
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise SafetensorError(f"{source}: header is not valid JSON ({e!r:.200})") from e
    if not isinstance(header, dict):
        raise SafetensorError(f"{source}: header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise SafetensorError(f"{source}: __metadata__ is not a mapping of strings to strings")
    entries = {name: _entry(name, info, source) for name, info in header.items()}
    # The buffer is covered exactly, without holes or overlaps, as the reference checks.
    at = 0
    for name, e in sorted(entries.items(), key=lambda item: (item[1].begin, item[1].end)):
        if e.begin != at:
            raise SafetensorError(f"{source}: tensor {name!r} has invalid offsets")
        at = e.end
    if at != total - 8 - n:
        raise SafetensorError(f"{source}: incomplete metadata, file not fully covered")
    return 8 + n, entries, metadata


def _entry(name, info, source) -> _Entry:
    if not isinstance(info, dict):
        raise SafetensorError(f"{source}: entry {name!r} is not a JSON object")
    code, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    size = _itemsize(code)
    if size is None:
        raise SafetensorError(f"{source}: tensor {name!r} has dtype {code!r}, unknown to flambeau")
    if not (isinstance(shape, list) and all(_S._is_index(d) for d in shape)):
        raise SafetensorError(f"{source}: tensor {name!r} has an invalid shape {str(shape)[:80]}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_S._is_index, offsets))):
        raise SafetensorError(f"{source}: tensor {name!r} has invalid data_offsets")
    numel = 1
    for d in shape:
        numel *= d
    if offsets[1] - offsets[0] != numel * size:
        raise SafetensorError(
            f"{source}: tensor {name!r} of shape {shape} and dtype {code} holds "
            f"{offsets[1] - offsets[0]} bytes, not {numel * size}"
        )
    return _Entry(code, tuple(shape), offsets[0], offsets[1])


def _tensor(buf, start: int, e: _Entry, name: str, copy: bool) -> F.Tensor:
    """The tensor an entry describes, over the bytes of buf (a NumPy uint8 array)."""
    dtype = getattr(F, _DTYPES[e.code])
    if e.end == e.begin:
        return F.empty(e.shape, dtype=dtype)
    raw = buf[start + e.begin : start + e.end]
    swap = sys.byteorder == "big" and dtype.itemsize > 1  # the format is little-endian
    # Kernels may assume aligned elements: unaligned ones are copied, as is what will change.
    if copy or swap or (start + e.begin) % dtype.itemsize:
        raw = raw.copy()
    t = F.from_numpy(raw)
    if swap:
        _S._byteswap_(t, dtype.itemsize // (2 if dtype.is_complex else 1))
    return t.view(dtype).view(e.shape)


def _device(device) -> F.device:
    return F.device(f"cuda:{device}" if type(device) is int else device)


class safe_open:  # noqa: N801 - the name safetensors gives it
    """A safetensors file, mapped, its tensors built as asked: ``with safe_open(path, "pt")``.

    >>> import os, tempfile
    >>> from flambeau.safetensors import safe_open, save_file
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_file({"w": flambeau.tensor([1.0, 2.0])}, os.path.join(d, "m.safetensors"))
    ...     with safe_open(os.path.join(d, "m.safetensors"), "pt") as f:
    ...         print(f.keys(), f.get_tensor("w"))
    ['w'] tensor([1., 2.])
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        import numpy as np

        if framework not in ("pt", "torch", "flambeau"):
            raise ValueError(
                f"flambeau.safetensors.safe_open gives flambeau tensors, not {framework!r}"
            )
        self.device = _device(device)
        self.source = os.fspath(filename)
        total = os.path.getsize(filename)
        # NumPy cannot map an empty file; its header is too small all the same.
        self.buf = np.memmap(filename, np.uint8, "c") if total else np.zeros(0, np.uint8)
        self.start, self.entries, self.meta = _parse(
            self.buf[: _MAX_HEADER + 8], total, self.source
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self) -> list[str]:
        return sorted(self.entries)

    def offset_keys(self) -> list[str]:
        return sorted(self.entries, key=lambda k: self.entries[k].begin)

    def metadata(self) -> dict[str, str] | None:
        return self.meta

    def get_tensor(self, name: str) -> F.Tensor:
        if name not in self.entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        t = _tensor(self.buf, self.start, self.entries[name], name, copy=False)
        return t if t.device == self.device else t.to(self.device)

    def get_slice(self, name: str) -> _Slice:
        if name not in self.entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)


class _Slice:
    """A tensor of the file not yet built: its shape and dtype, and indexing."""

    def __init__(self, file: safe_open, name: str):
        self.file, self.name = file, name

    def get_shape(self) -> list[int]:
        return list(self.file.entries[self.name].shape)

    def get_dtype(self) -> str:
        return self.file.entries[self.name].code

    def __getitem__(self, index) -> F.Tensor:
        return self.file.get_tensor(self.name)[index]


def load_file(filename, device="cpu") -> dict[str, F.Tensor]:
    """The tensors of a safetensors file, by name, mapped copy-on-write from the file.

    >>> import os, tempfile
    >>> from flambeau.safetensors import load_file, save_file
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_file({"w": flambeau.tensor([1.0, 2.0])}, os.path.join(d, "m.safetensors"))
    ...     print(load_file(os.path.join(d, "m.safetensors")))
    {'w': tensor([1., 2.])}
    """
    with safe_open(filename, "pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.keys()}


def load(data: bytes) -> dict[str, F.Tensor]:
    """The tensors of safetensors bytes (what :func:`save` returns), each a copy, on the CPU.

    >>> from flambeau.safetensors import load, save
    >>> load(save({"w": flambeau.tensor([1.0, 2.0])}))
    {'w': tensor([1., 2.])}
    """
    import numpy as np

    buf = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    start, entries, _ = _parse(buf[: _MAX_HEADER + 8], buf.size, "<bytes>")
    return {name: _tensor(buf, start, e, name, copy=True) for name, e in sorted(entries.items())}


def _load_for_torch_load(filename, map_location) -> dict[str, F.Tensor]:
    """flambeau.load of a .safetensors path: map_location must name one device, as in torch."""
    if map_location is None:
        return load_file(filename)
    if isinstance(map_location, bytes):
        map_location = map_location.decode()
    if not isinstance(map_location, (str, F.device)):
        raise RuntimeError(
            "Loading safetensors file with a dict or callable map_location is not supported. "
            "Use a device string or flambeau.device instead."
        )
    return load_file(filename, device=map_location)


# ---- writing ------------------------------------------------------------------------------


def _package():
    try:
        import safetensors
    except ImportError as e:
        raise ImportError(
            "flambeau.safetensors needs the safetensors package to write files: "
            "pip install safetensors"
        ) from e
    return safetensors


def _check(tensors) -> None:
    """What safetensors.torch refuses: non-tensors, shared memory, gaps between elements."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, flambeau.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise ValueError(f"Key {k!r} is invalid, expected a str")
        if not isinstance(v, F.Tensor):
            raise ValueError(
                f"Key `{k}` is invalid, expected flambeau.Tensor but received {type(v)}"
            )
    failing = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if failing:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {failing}. A potential way to correctly save "
            "your model is to use `save_model`. More information at "
            "https://huggingface.co/docs/safetensors/torch_shared_tensors"
        )
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It "
                "either means you are trying to save tensors which are reference of each other in "
                "which case it's recommended to save only the full tensors, and reslice at load "
                "time, or simply call `.contiguous()` on your tensor to pack it before saving."
            )
        if str(v.dtype).removeprefix("flambeau.") not in _CODES:
            raise ValueError(f"safetensors has no dtype for `{k}` of {v.dtype}")


def _specs(tensors, keep_alive: list) -> dict:
    """The package's description of each tensor: its dtype, shape and bytes in memory."""
    import numpy as np

    pkg = _package()
    _check(tensors)
    spec_type = getattr(pkg, "TensorSpec", None)
    specs = {}
    for k, v in tensors.items():
        t = v.detach().cpu()
        raw = t.view(-1).view(F.uint8).numpy() if t.numel() else np.zeros(1, np.uint8)
        if sys.byteorder == "big" and t.element_size() > 1:  # the format is little-endian
            swapped = F.from_numpy(raw.copy())
            _S._byteswap_(swapped, t.element_size() // (2 if t.dtype.is_complex else 1))
            raw = swapped.numpy()
        keep_alive.append((t, raw))
        dtype, shape, nbytes = str(t.dtype).removeprefix("flambeau."), list(t.shape), t.nbytes
        if spec_type is not None:  # safetensors >= 0.8 reads the memory where it is
            specs[k] = spec_type(
                dtype=dtype, shape=shape, data_ptr=raw.ctypes.data, data_len=nbytes
            )
        else:
            specs[k] = {"dtype": dtype, "shape": shape, "data": raw[:nbytes].tobytes()}
    return specs


def save(tensors: dict[str, F.Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of a dict of contiguous tensors that share no memory.

    >>> from flambeau.safetensors import save
    >>> data = save({"w": flambeau.tensor([1.0, 2.0])})
    >>> type(data), len(data)
    (<class 'bytes'>, 72)
    """
    keep_alive: list = []  # the memory the specs point at
    return bytes(_package().serialize(_specs(tensors, keep_alive), metadata=metadata))


def save_file(tensors: dict[str, F.Tensor], filename, metadata: dict[str, str] | None = None):
    """Writes a dict of contiguous tensors that share no memory to a safetensors file.

    >>> import os, tempfile
    >>> from flambeau.safetensors import safe_open, save_file
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "m.safetensors")
    ...     save_file({"w": flambeau.zeros(2, 3)}, path, metadata={"step": "3"})
    ...     with safe_open(path, "pt") as f:
    ...         print(f.metadata(), f.get_slice("w").get_shape())
    {'step': '3'} [2, 3]
    """
    keep_alive: list = []
    _package().serialize_file(_specs(tensors, keep_alive), filename, metadata=metadata)


# ---- models, whose tied weights share memory -------------------------------------------------


def _end_ptr(t: F.Tensor) -> int:
    return t.data_ptr() + t.numel() * t.element_size() if t.numel() else t.data_ptr()


def _find_shared_tensors(state: dict) -> list[set[str]]:
    """Names grouped by the memory they overlap (tensors of one storage may not overlap)."""
    by_storage: dict[tuple, set[str]] = {}
    for k, v in state.items():
        if v._storage_ptr() != 0 and v._storage_nbytes() != 0:
            key = (str(v.device), v._storage_ptr(), v._storage_nbytes())
            by_storage.setdefault(key, set()).add(k)
    groups = []
    for names in sorted(by_storage.values(), key=sorted):
        areas = sorted((state[n].data_ptr(), _end_ptr(state[n]), n) for n in names)
        _, last_stop, first = areas[0]
        groups.append({first})
        for start, stop, name in areas[1:]:
            if start >= last_stop:
                groups.append({name})
            else:
                groups[-1].add(name)
            last_stop = max(last_stop, stop)
    return groups


def _is_complete(t: F.Tensor) -> bool:
    return t.data_ptr() == t._storage_ptr() and t.nbytes == t._storage_nbytes()


def _remove_duplicate_names(state: dict, preferred_names=()) -> dict[str, list[str]]:
    """For each group of names sharing memory, the one to keep and those to drop."""
    preferred_names = set(preferred_names)
    to_remove: dict[str, list[str]] = {}
    for shared in _find_shared_tensors(state):
        complete = {name for name in shared if _is_complete(state[name])}
        if not complete:
            raise RuntimeError(
                "Error while trying to find names to remove to save state dict, but found no "
                f"suitable name to keep for saving amongst: {shared}. None is covering the entire "
                "storage. Refusing to save/load the model since you could be storing much more "
                "memory than needed."
            )
        keep = sorted(preferred_names & complete or complete)[0]
        removed = sorted(shared - {keep})
        if removed:
            to_remove[keep] = removed
    return to_remove


def save_model(model, filename, metadata: dict[str, str] | None = None, force_contiguous=True):
    """Saves a module's state_dict, each tied weight once (its other names go in the metadata).

    >>> import os, tempfile
    >>> from flambeau.safetensors import load_file, save_model
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_model(flambeau.nn.Linear(2, 1), os.path.join(d, "m.safetensors"))
    ...     print(sorted(load_file(os.path.join(d, "m.safetensors"))))
    ['bias', 'weight']
    """
    state = model.state_dict()
    metadata = dict(metadata or {})
    for keep, removed in _remove_duplicate_names(state).items():
        for name in removed:
            metadata.setdefault(name, keep)
            del state[name]
    if force_contiguous:
        state = {k: v.contiguous() for k, v in state.items()}
    try:
        save_file(state, filename, metadata=metadata)
    except ValueError as e:
        raise ValueError(f"{e}. Try saving with `force_contiguous=True`.") from e


def load_model(model, filename, strict=True, device="cpu") -> tuple[list[str], list[str]]:
    """Loads a file of :func:`save_model` into a module; returns (missing, unexpected) names.

    >>> import os, tempfile
    >>> from flambeau.safetensors import load_model, save_model
    >>> a, b = flambeau.nn.Linear(2, 1), flambeau.nn.Linear(2, 1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_model(a, os.path.join(d, "m.safetensors"))
    ...     print(load_model(b, os.path.join(d, "m.safetensors")))
    ([], [])
    >>> flambeau.equal(a.weight, b.weight)
    True
    """
    state = load_file(filename, device=device)
    model_state = model.state_dict()
    to_remove = _remove_duplicate_names(model_state, preferred_names=state.keys())
    result = model.load_state_dict(state, strict=False)
    missing, unexpected = set(result.missing_keys), list(result.unexpected_keys)
    for removed in to_remove.values():
        for name in removed:
            if name in missing:
                missing.remove(name)  # loaded through the name it shares memory with
            else:
                unexpected.append(name)
    missing = sorted(missing)
    if strict and (missing or unexpected):
        lines = []
        if missing:
            lines.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing))
        if unexpected:
            lines.append(
                "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
            )
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(model).__name__}:\n\t" + "\n\t".join(lines)
        )
    return missing, unexpected
