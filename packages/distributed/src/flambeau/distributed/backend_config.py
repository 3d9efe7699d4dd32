"""Which backend serves which device: BackendConfig, get_backend_config,
get_default_backend_for_device and is_backend_available, with PyTorch's tables
(Backend.default_device_backend_map, Backend.backend_capability). Every flambeau
process group runs on MPI, which serves "gloo" too."""

from __future__ import annotations

import warnings

import flambeau

from .process_group import Backend, resolve_group

__all__ = [
    "BackendConfig",
    "get_backend_config",
    "get_default_backend_for_device",
    "is_backend_available",
]


class BackendConfig:
    """The backend of each device type that a backend string names, as
    ``torch.distributed.BackendConfig``: ``"gloo"`` (every device the backend serves),
    ``"cpu:gloo,cuda:nccl"`` (one per device), or ``"undefined"`` (the default backend
    of this machine's accelerator, or the CPU's).

    >>> import flambeau.distributed as dist
    >>> dist.BackendConfig("cpu:gloo,cuda:nccl").get_device_backend_map()
    {'cpu': 'gloo', 'cuda': 'nccl'}
    >>> dist.BackendConfig("mpi")
    cpu:mpi,cuda:mpi
    """

    def __init__(self, backend: Backend):
        self.device_backend_map: dict[str, Backend] = {}
        backend = str(backend)
        if backend == Backend.UNDEFINED:
            accelerator = flambeau.accelerator.current_accelerator()
            device_type = accelerator.type if accelerator is not None else "cpu"
            try:
                name = Backend.default_device_backend_map[device_type]
            except KeyError:
                raise ValueError(
                    f"We detected accelerator {device_type} on your machine. But we don't know "
                    "which communication backend to use for this accelerator. Please specify "
                    "the `backend` argument in the `init_process_group` call."
                ) from None
            self.device_backend_map[device_type] = Backend(name)
        elif backend.lower() in Backend.backend_list:
            devices = Backend.backend_capability[backend.lower()]
            self.device_backend_map = dict.fromkeys(devices, Backend(backend))
        elif ":" in backend:
            usage = (
                f"The custom backend string argument is invalid: {backend}. The backend string "
                'must be in the format "<device_type1>:<backend1>,<device_type2>:<backend2>...", '
                "e.g. 'cpu:gloo,cuda:nccl'"
            )
            for pair in backend.lower().split(","):
                parts = pair.split(":")
                if len(parts) != 2:
                    raise ValueError(f"Invalid device:backend pairing: {pair}. {usage}")
                device, name = parts
                if device in self.device_backend_map:
                    raise ValueError(f"Duplicate device type {device} in backend string. {usage}")
                self.device_backend_map[device] = Backend(name)
        else:
            warnings.warn(
                f"Device capability of {backend} unknown, assuming `cpu` and `cuda`. You can "
                "specify it in `device:backend` format in `init_process_group` call.",
                stacklevel=2,
            )
            value = Backend(backend)
            self.device_backend_map = {"cpu": value, "cuda": value, "xpu": value}

    def __repr__(self) -> str:
        return ",".join(f"{device}:{name}" for device, name in self.device_backend_map.items())

    def get_device_backend_map(self) -> dict[str, Backend]:
        """The backend of each device type.

        >>> import flambeau.distributed as dist
        >>> dist.BackendConfig("gloo").get_device_backend_map()
        {'cpu': 'gloo', 'cuda': 'gloo'}
        """
        return self.device_backend_map


def get_backend_config(group=None) -> str:
    """The backend configuration of `group` (the default group when None), as
    ``"device:backend"`` pairs: ``"cpu:mpi,cuda:mpi"``, since every flambeau group runs
    on MPI. ValueError before :func:`init_process_group` or outside `group`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group("gloo")  # served by MPI
    >>> dist.get_backend_config()
    'cpu:mpi,cuda:mpi'
    >>> dist.destroy_process_group()
    """
    if resolve_group(group) is None:
        raise ValueError("Invalid process group specified")
    return str(BackendConfig(Backend.MPI))


def get_default_backend_for_device(device) -> str:
    """PyTorch's default backend for a device (a device or a string): ``"gloo"`` for
    the CPU (which flambeau's MPI serves), ``"nccl"`` for CUDA, ``"xccl"`` for XPU.
    ValueError for a device type without one.

    >>> import flambeau.distributed as dist
    >>> dist.get_default_backend_for_device("cpu"), dist.get_default_backend_for_device("cuda:1")
    ('gloo', 'nccl')
    """
    device_type = (
        device.type if isinstance(device, flambeau.device) else flambeau.device(device).type
    )
    backend = Backend.default_device_backend_map.get(device_type)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def _available(name: str) -> bool:
    from . import (
        is_gloo_available,
        is_mpi_available,
        is_nccl_available,
        is_ucc_available,
        is_xccl_available,
    )

    checks = {
        Backend.MPI: is_mpi_available,
        Backend.GLOO: is_gloo_available,
        Backend.NCCL: is_nccl_available,
        Backend.UCC: is_ucc_available,
        Backend.XCCL: is_xccl_available,
    }
    check = checks.get(name.lower())
    return check() if check is not None else False


def is_backend_available(backend: str) -> bool:
    """Whether `backend` (a name, or ``"device:backend"`` pairs) is available, each
    name answered by its ``is_<name>_available()``: True for ``"mpi"``; False for
    ``"gloo"`` (``init_process_group("gloo")`` still works, served by MPI), ``"nccl"``,
    ``"ucc"``, ``"xccl"`` and names flambeau does not know.

    >>> import flambeau.distributed as dist
    >>> dist.is_backend_available("mpi"), dist.is_backend_available("nccl")
    (True, False)
    """
    if ":" in backend.lower():
        names = BackendConfig(Backend(backend)).get_device_backend_map().values()
        return all(_available(str(name)) for name in names)
    return _available(backend)
