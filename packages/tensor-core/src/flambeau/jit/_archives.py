"""TorchScript archives: flambeau can neither write nor run them.

A TorchScript archive (``torch.jit.save``) holds the model's compiled code as well as
its tensors; flambeau has no TorchScript interpreter to run the code, and
``flambeau.load`` does not read these archives either. The functions raise what
PyTorch raises where the JIT is disabled (``save`` of an eager module: AttributeError)
or where the archive cannot be loaded (RuntimeError), with a message saying how to
move the weights instead: ``state_dict`` through ``torch.save``/``flambeau.load``.
"""

from __future__ import annotations

import os

_WEIGHTS_INSTEAD = (
    "Save the weights instead: flambeau.save(model.state_dict(), f) (or torch.save in "
    "PyTorch), then build the model in Python and call "
    "model.load_state_dict(flambeau.load(f))."
)


def _not_scripted(m, function: str) -> AttributeError:
    return AttributeError(
        f"flambeau.jit.{function}: {type(m).__name__!r} object is not a TorchScript module: "
        "flambeau runs scripted code eagerly and cannot write TorchScript archives. "
        + _WEIGHTS_INSTEAD
    )


def save(m, f, _extra_files=None) -> None:
    """Would write a TorchScript archive; flambeau has no compiled code to write, so it
    raises AttributeError (as PyTorch does for a module scripted with the JIT disabled).

    >>> try:
    ...     flambeau.jit.save(flambeau.jit.script(flambeau.nn.Linear(2, 2)), "model.pt")
    ... except AttributeError as e:
    ...     print(str(e)[:70])
    flambeau.jit.save: 'Linear' object is not a TorchScript module: flambe
    """
    del f, _extra_files
    raise _not_scripted(m, "save")


def save_jit_module_to_flatbuffer(m, f, _extra_files=None) -> None:
    """Would write a TorchScript module as a flatbuffer; raises AttributeError, as
    :func:`save` does.

    >>> try:
    ...     flambeau.jit.save_jit_module_to_flatbuffer(flambeau.nn.Linear(2, 2), "m.ff")
    ... except AttributeError:
    ...     print("not a TorchScript module")
    not a TorchScript module
    """
    del f, _extra_files
    raise _not_scripted(m, "save_jit_module_to_flatbuffer")


def export_opnames(m):
    """Would list the operators a TorchScript module's code calls; an eager module has
    no such code, so it raises AttributeError, as PyTorch with the JIT disabled does.

    >>> try:
    ...     flambeau.jit.export_opnames(flambeau.nn.Linear(2, 2))
    ... except AttributeError:
    ...     print("not a TorchScript module")
    not a TorchScript module
    """
    raise AttributeError(
        f"flambeau.jit.export_opnames: {type(m).__name__!r} object is not a TorchScript "
        "module: flambeau runs scripted code eagerly, so there is no operator list"
    )


def _validate_map_location(map_location) -> None:
    import flambeau

    if isinstance(map_location, str):
        flambeau.device(map_location)
    elif not (map_location is None or isinstance(map_location, flambeau.device)):
        raise ValueError(
            "map_location should be either None, string or flambeau.device, but got type: "
            + str(type(map_location))
        )


def _what_it_is(f) -> str:
    """What the file holds, for the message: a TorchScript archive has constants.pkl."""
    import zipfile  # not at the top: 10 ms of imports, for this message only

    try:
        with zipfile.ZipFile(f) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "not a TorchScript archive (not a ZIP file)"
    finally:
        if hasattr(f, "seek"):
            f.seek(0)
    if any(name.endswith("/constants.pkl") or name == "constants.pkl" for name in names):
        return "a TorchScript archive (torch.jit.save)"
    return (
        "not a TorchScript archive (it has no constants.pkl); a torch.save or "
        "flambeau.save checkpoint loads with flambeau.load"
    )


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Would load a TorchScript archive; flambeau cannot run TorchScript code, and
    ``flambeau.load`` does not read these archives' tensors either, so it raises
    RuntimeError saying what the file is and how to move the weights.

    A missing file or a directory raises ValueError, a bad ``map_location`` too, as in
    PyTorch.

    >>> try:
    ...     flambeau.jit.load("no_such_model.pt")
    ... except ValueError as e:
    ...     print(e)
    The provided filename no_such_model.pt does not exist
    """
    del _extra_files, _restore_shapes
    is_path = isinstance(f, (str, os.PathLike))
    if is_path:
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    _validate_map_location(map_location)
    source = os.fspath(f) if is_path else getattr(f, "name", "<file>")
    raise RuntimeError(
        f"flambeau.jit.load: {source}: {_what_it_is(f)}. flambeau cannot load TorchScript "
        "archives: it does not run TorchScript code, and flambeau.load does not read "
        "their tensors either. In PyTorch, save the model's weights with "
        "torch.save(model.state_dict(), path), then build the model in Python and call "
        "model.load_state_dict(flambeau.load(path))."
    )


def jit_module_from_flatbuffer(f):
    """Would load a TorchScript module from a flatbuffer; raises RuntimeError, as
    :func:`load` does.

    >>> try:
    ...     flambeau.jit.jit_module_from_flatbuffer("model.ff")
    ... except RuntimeError:
    ...     print("flambeau cannot run TorchScript")
    flambeau cannot run TorchScript
    """
    source = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    raise RuntimeError(
        f"flambeau.jit.jit_module_from_flatbuffer: {source}: flambeau cannot load "
        "TorchScript modules: it does not run TorchScript code. " + _WEIGHTS_INSTEAD
    )
