"""flambeau's CUDA backend: device type ``"cuda"``, reached as ``flambeau.cuda``.

Importing this module registers the backend with flambeau's core through its C ABI (the
extension ``flambeau_cuda._C`` does it); flambeau imports it the first time ``"cuda"`` is
named (entry point ``cuda`` of group ``flambeau.backends``). It touches no driver:
CUDA initializes lazily, on the first use that needs a device, so the import works on
machines without a GPU, where ``is_available()`` is False.
"""

from flambeau._errors import AcceleratorError, OutOfMemoryError
from flambeau_cuda import _sharing
from flambeau_cuda._devices import (
    _get_device_index,
    current_device,
    device,
    device_of,
    get_arch_list,
    get_device_capability,
    get_device_name,
    get_device_properties,
    is_bf16_supported,
    is_tf32_supported,
    set_device,
    synchronize,
)
from flambeau_cuda._init_state import (
    _C,
    _lazy_init,
    _unavailable_reason,
    device_count,
    init,
    is_available,
    is_initialized,
)
from flambeau_cuda._memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from flambeau_cuda._pinned import is_pinned, pin_memory, record_stream  # noqa: F401 - core hooks
from flambeau_cuda._random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from flambeau_cuda._streams import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

__version__ = _C.__version__

__all__ = [
    "AcceleratorError",
    "Event",
    "OutOfMemoryError",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]

# Names used by the tests and the at-fork guard, not part of torch.cuda's API.
_private = (_get_device_index, _lazy_init, _unavailable_reason)

_sharing.register()  # CUDA tensors through flambeau.multiprocessing: IPC handles
