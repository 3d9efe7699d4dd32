"""flambeau.types (torch.types): the aliases name flambeau's classes; without symbolic
shapes the int-likes are ints."""

import builtins
import os
import typing
from collections.abc import Sequence

import flambeau
from flambeau import types


def test_reachable_from_flambeau_and_all():
    assert flambeau.types is types
    assert types.__all__ == ["Number", "Device", "FileLike", "Storage"]


def test_underscored_names_are_the_builtins_and_flambeau_classes():
    for name in ("bool", "bytes", "complex", "float", "int", "str"):
        assert getattr(types, f"_{name}") is getattr(builtins, name)
    assert types._device is flambeau.device
    assert types._dtype is flambeau.dtype
    assert types._layout is flambeau.layout
    assert types.Size is flambeau.Size and types.Tensor is flambeau.Tensor


def test_unions():
    assert types.Number == int | float | bool
    assert types._Number == (int, float, bool)
    assert isinstance(2.5, types._Number) and not isinstance("2", types._Number)
    assert types.Device == flambeau.device | str | int | None
    assert types._size == flambeau.Size | list[int] | tuple[int, ...]
    assert types._symsize == flambeau.Size | Sequence[int]
    assert types._TensorOrTensors == flambeau.Tensor | Sequence[flambeau.Tensor]
    assert types._TensorOrOptionalTensors == flambeau.Tensor | Sequence[flambeau.Tensor | None]
    assert types.FileLike == typing.Union[str, os.PathLike[str], typing.IO[bytes]]  # noqa: UP007
    args = typing.get_args(types._TensorOrTensorsOrGradEdge)
    assert args[:2] == (flambeau.Tensor, Sequence[flambeau.Tensor])
    assert args[2] == typing.ForwardRef("GradientEdge")


def test_no_symbolic_values():
    assert types.IntLikeType is int
    assert types.FloatLikeType is float
    assert types.BoolLikeType is bool
    assert types.py_sym_types == ()
    assert not isinstance(3, types.py_sym_types)
    for absent in ("SymInt", "SymFloat", "SymBool", "PySymType", "DispatchKey", "_qscheme"):
        assert not hasattr(types, absent)


def test_storage_is_an_interface_to_annotate_with():
    storage = flambeau.ones(2).untyped_storage()
    assert not isinstance(storage, types.Storage)  # as in PyTorch: not a base class
    for method in ("element_size", "is_shared", "share_memory_", "nbytes", "cpu", "data_ptr"):
        assert callable(getattr(storage, method))
    assert types.Storage.__annotations__ == {"device": "_device", "dtype": "_dtype"}


def test_annotations_resolve():
    def save_to(f: types.FileLike, device: types.Device = None) -> types.Number:
        return 0

    hints = typing.get_type_hints(save_to)
    assert hints["f"] == types.FileLike and hints["device"] == types.Device
