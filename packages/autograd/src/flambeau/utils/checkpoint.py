"""Activation checkpointing, as torch.utils.checkpoint: trade compute for memory.

``checkpoint(function, *args)`` runs ``function`` without keeping the tensors it would
save for backward; backward runs it again (with the random state it had, so dropout
draws the same) to get them back. Two variants, as in PyTorch:

* ``use_reentrant=False`` (recommended): the forward is recorded as usual, but every
  tensor it saves goes through saved-tensor hooks that keep only a placeholder. The
  first placeholder backward unpacks triggers the recomputation (stopped as soon as
  every saved tensor is back, unless ``early_stop=False``); each recomputed tensor is
  handed out once and then dropped. Works with ``autograd.grad``, ``backward(inputs=)``,
  keyword arguments and nested checkpoints.
* ``use_reentrant=True`` (PyTorch's default when ``use_reentrant`` is not passed, with a
  warning): a custom Function runs the forward without recording, and its backward
  reruns it with recording and calls ``backward`` on the result (a backward inside the
  backward), so only ``.backward()`` without ``inputs`` may drive it.

This module is part of the distribution flambeau-autograd (it needs autograd), added to
the core's ``flambeau.utils`` package.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import traceback
import warnings
import weakref

import flambeau
from flambeau import random as _random
from flambeau.autograd import Function, enable_grad
from flambeau.autograd import backward as _backward
from flambeau.autograd import engine as _engine
from flambeau.autograd import saved_tensors as _saved
from flambeau.autograd.recorder import _modified
from flambeau.utils._pytree import tree_map  # noqa: F401 - torch.utils.checkpoint's import

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "DefaultDeviceType",
    "GraphExecGroup",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "get_device_states",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
    "set_device_states",
]

_NAME = "flambeau.utils.checkpoint"
_DEBUG_TIP = (
    f"\nTip: to see where each tensor was saved, pass `debug=True` to `{_NAME}.checkpoint(...)` "
    f"or wrap the code block in `with {_NAME}.set_checkpoint_debug_enabled(True):`."
)


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved.

    >>> from flambeau.utils.checkpoint import CheckpointError, checkpoint
    >>> calls = []
    >>> def f(t):  # computes in float64 the second time: not deterministic
    ...     calls.append(t)
    ...     return (t * t).sum() if len(calls) == 1 else (t.double() * t.double()).sum()
    >>> y = checkpoint(f, flambeau.ones(2, requires_grad=True), use_reentrant=False)
    >>> try:
    ...     y.backward()
    ... except CheckpointError as e:
    ...     print(str(e).splitlines()[0])
    flambeau.utils.checkpoint: Recomputed values for the following tensors have different ...
    """


# -- global switches ------------------------------------------------------------------------

_early_stop_override: bool | None = None
_debug_override: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Inside the block, non-reentrant checkpoints made stop (or not) their recomputation
    as soon as every saved tensor is back, whatever their ``early_stop`` says.

    >>> from flambeau.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    >>> x = flambeau.tensor([0.0, 1.0], requires_grad=True)
    >>> with set_checkpoint_early_stop(False):
    ...     y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """
    global _early_stop_override
    previous, _early_stop_override = _early_stop_override, enable
    try:
        yield
    finally:
        _early_stop_override = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Inside the block, ``debug`` of every checkpoint is ``enabled`` (None: their own).

    >>> from flambeau.utils.checkpoint import checkpoint, set_checkpoint_debug_enabled
    >>> x = flambeau.tensor([0.0, 1.0], requires_grad=True)
    >>> with set_checkpoint_debug_enabled(True):
    ...     y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """
    global _debug_override
    previous, _debug_override = _debug_override, enabled
    try:
        yield
    finally:
        _debug_override = previous


def noop_context_fn():
    """The default ``context_fn``: no context for the forward or the recomputation.

    >>> from flambeau.utils.checkpoint import noop_context_fn
    >>> forward_ctx, recompute_ctx = noop_context_fn()
    >>> with forward_ctx:
    ...     pass
    >>> type(recompute_ctx).__name__
    'nullcontext'
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


# -- inputs, devices and random state -------------------------------------------------------


def _tensors_in(value):
    """The tensors in value, looking into tuples, lists and dicts."""
    if isinstance(value, flambeau.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


def detach_variable(inputs: tuple) -> tuple:
    """``inputs`` with every tensor detached, keeping its requires_grad.

    >>> from flambeau.utils.checkpoint import detach_variable
    >>> y = flambeau.ones(2, requires_grad=True) * 2
    >>> (d, n) = detach_variable((y, 3))
    >>> d.grad_fn is None, d.requires_grad, n
    (True, True, 3)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for value in inputs:
        if isinstance(value, flambeau.Tensor):
            detached = value.detach()
            detached.requires_grad = value.requires_grad
            value = detached
        out.append(value)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warns when no tensor of ``inputs`` requires grad (the reentrant variant then
    gives no gradient to anything inside the checkpoint).

    >>> import warnings
    >>> from flambeau.utils.checkpoint import check_backward_validity
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     check_backward_validity((flambeau.ones(2),))
    >>> str(caught[0].message)
    'None of the inputs have requires_grad=True. Gradients will be None'
    """
    if not any(t.requires_grad for t in inputs if isinstance(t, flambeau.Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


class DefaultDeviceType:
    """The device type whose random state checkpoints save when no argument lives on a
    device other than the CPU: the accelerator's type, or "cpu" without one.

    >>> from flambeau.utils.checkpoint import DefaultDeviceType
    >>> DefaultDeviceType.get_device_type()  # no accelerator here
    'cpu'
    """

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            from flambeau import accelerator

            current = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = current.type if current else "cpu"
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args) -> str:
    types = [t.device.type for t in _tensors_in(args) if t.device.type != "cpu"]
    if not types:
        return DefaultDeviceType.get_device_type()
    if len(set(types)) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of "
            "devices. Device state will only be saved for devices of a single device type, "
            "and the remaining devices will be ignored. Consequently, if any checkpointed "
            "functions involve randomness, this may result in incorrect gradients. (Note "
            "that if CUDA devices are among the devices detected, it will be prioritized; "
            "otherwise, the first device encountered will be selected.)\nDevice types: "
            f"{sorted(set(types))} first device type: {types[0]}",
            stacklevel=3,
        )
    return "cuda" if "cuda" in types else types[0]


def get_device_states(*args) -> tuple[list[int], list]:
    """(device indices, random states) of the devices of ``args``' tensors whose backend
    keeps a random state per device; ([], []) when theirs is the default generator's.

    >>> from flambeau.utils.checkpoint import get_device_states
    >>> get_device_states(flambeau.ones(2))  # CPU tensors: the default generator's state
    ([], [])
    """
    indices = [
        t.device.index or 0 for t in _tensors_in(args) if t.device.type not in ("cpu", "meta")
    ]
    module = _random._device_rng_module(_infer_device_type(*args)) if indices else None
    if module is None:
        return [], []
    return indices, [module.get_rng_state(i) for i in indices]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restores what :func:`get_device_states` returned.

    >>> from flambeau.utils.checkpoint import get_device_states, set_device_states
    >>> devices, states = get_device_states(flambeau.ones(2))
    >>> set_device_states(devices, states)  # nothing to restore for CPU tensors
    """
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    devices, states = list(devices), list(states)
    module = _random._device_rng_module(device_type)
    if module is None:
        if devices:
            raise RuntimeError(
                f"set_device_states: no backend with random state of its own provides "
                f"device type {device_type!r}"
            )
        return
    for device, state in zip(devices, states):
        module.set_rng_state(state, device)


class _RandomState:
    """The random state a forward started from, to give its recomputation the same."""

    def __init__(self, preserve: bool, device_type: str, args: tuple):
        self.preserve = preserve
        self.device_type = device_type
        if preserve:
            self.cpu_state = flambeau.get_rng_state()
            self.devices, self.device_states = get_device_states(*args)

    @contextlib.contextmanager
    def restored(self):
        """Runs the block from the saved state, and puts the state back as it was after."""
        if not self.preserve:
            yield
            return
        with _random.fork_rng(devices=self.devices, device_type=self.device_type):
            flambeau.set_rng_state(self.cpu_state)
            set_device_states(self.devices, self.device_states, device_type=self.device_type)
            yield


class _AutocastState:
    """The autocast settings a forward ran under (for its device type and the CPU), to run
    its recomputation under the same: a bfloat16 forward recomputes in bfloat16."""

    def __init__(self, device_type: str):
        self.device_type = device_type
        cache = flambeau.is_autocast_cache_enabled()
        self.device_kwargs = None
        if device_type != "cpu" and flambeau.amp.is_autocast_available(device_type):
            self.device_kwargs = {
                "enabled": flambeau.is_autocast_enabled(device_type),
                "dtype": flambeau.get_autocast_dtype(device_type),
                "cache_enabled": cache,
            }
        self.cpu_kwargs = {
            "enabled": flambeau.is_autocast_enabled("cpu"),
            "dtype": flambeau.get_autocast_dtype("cpu"),
            "cache_enabled": cache,
        }

    @contextlib.contextmanager
    def restored(self):
        with contextlib.ExitStack() as stack:
            if self.device_kwargs is not None:
                stack.enter_context(
                    flambeau.amp.autocast(device_type=self.device_type, **self.device_kwargs)
                )
            stack.enter_context(flambeau.amp.autocast("cpu", **self.cpu_kwargs))
            yield


# -- the reentrant variant ------------------------------------------------------------------


class CheckpointFunction(Function):
    """The reentrant variant: ``apply(run_function, preserve_rng_state, *args)``.

    >>> from flambeau.utils.checkpoint import CheckpointFunction
    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> y = CheckpointFunction.apply(lambda t: t * t, True, x)
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        device_type = _infer_device_type(*args)
        ctx.random_state = _RandomState(preserve_rng_state, device_type, args)
        ctx.autocast_state = _AutocastState(device_type)
        ctx.inputs = [None if isinstance(a, flambeau.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, flambeau.Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        return run_function(*args)  # Function.apply runs forward without recording

    @staticmethod
    def backward(ctx, *grad_outputs):
        task = _engine.current_task()
        if task is not None and not task.executes_all:
            raise RuntimeError(
                f"When use_reentrant=True, {_NAME} is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` "
                "argument."
            )
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with ctx.random_state.restored():
            detached = detach_variable(tuple(inputs))
            with enable_grad(), ctx.autocast_state.restored():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, flambeau.Tensor):
            outputs = (outputs,)
        pairs = [
            (out, grad)
            for out, grad in zip(outputs, grad_outputs)
            if isinstance(out, flambeau.Tensor) and out.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(t.grad if isinstance(t, flambeau.Tensor) else None for t in detached)
        return (None, None, *grads)


# -- the non-reentrant variant --------------------------------------------------------------


class GraphExecGroup:
    """Backward calls inside the block share one recomputation of each non-reentrant
    checkpoint (by default each backward call recomputes what it needs). The calls must
    then use disjoint parts of the graph: a saved tensor is handed out once per group.

    >>> from flambeau.utils.checkpoint import GraphExecGroup, checkpoint
    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> a, b = checkpoint(lambda t: (t.exp(), t.sin()), x, use_reentrant=False)
    >>> with GraphExecGroup():
    ...     ga = flambeau.autograd.grad(a.sum(), x, retain_graph=True)
    ...     gb = flambeau.autograd.grad(b.sum(), x)
    >>> ga, gb
    ((tensor([2.7183, 7.3891]),), (tensor([ 0.5403, -0.4161]),))
    """

    _current = threading.local()

    def __enter__(self):
        current = GraphExecGroup._get_current_group()
        if current is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {current}"
            )
        GraphExecGroup._current.group = self
        return self

    def __exit__(self, *exc) -> None:
        GraphExecGroup._current.group = None

    @classmethod
    def _get_current_group(cls):
        return getattr(cls._current, "group", None)


class _OutsideBackward:
    """The recomputation key of an unpack outside any backward call: a fresh one each."""


def _recomputation_key():
    """What a recomputation serves: the exec group, else the backward call, running."""
    return GraphExecGroup._get_current_group() or _engine.current_task() or _OutsideBackward()


def _default_metadata(x) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA = {"default": _default_metadata, "none": lambda _: None}
_CONSUMED = object()  # a holder's entry once its recomputed tensor was handed out


class _Holder:
    """What the graph keeps for one saved tensor: the recomputed tensor per key."""

    __slots__ = ("values", "__weakref__")

    def __init__(self):
        self.values = weakref.WeakKeyDictionary()


class _StopRecomputation(Exception):
    """Raised inside the recomputation once every saved tensor is back (early stop)."""


class _Recomputation:
    __slots__ = ("count", "sites")

    def __init__(self):
        self.count = 0  # tensors saved so far
        self.sites: list = []  # debug: where each was saved


def _call_site() -> str:
    """The innermost line of the caller's code (outside flambeau) on the stack."""
    # By module name: flambeau's distributions share the package, and an editable install
    # lists path hooks, not folders, in flambeau.__path__.
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "flambeau" and not module.startswith("flambeau."):
            (site,) = traceback.extract_stack(frame, limit=1)
            return f"{site.filename}:{site.lineno} in {site.name}: {site.line}"
        frame = frame.f_back
    return "(inside flambeau)"


class _Frame:
    """One non-reentrant checkpoint call: its inputs, a weak reference to the holder of
    each tensor its forward saved (in order), and its recomputations so far."""

    def __init__(self, recompute, early_stop: bool, metadata_fn, debug: bool):
        self.recompute = recompute
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.debug = debug
        self.inputs: list = []
        self.holders: list = []
        self.metadata: list = []
        self.sites: list = []
        self.recomputations = weakref.WeakKeyDictionary()  # key -> _Recomputation
        self.forward_completed = False
        self.ignore_mismatch = False  # backward inside the forward, without early stop

    def save_inputs(self, args: tuple) -> None:
        # Saved as an operation saves its inputs: through the saved-tensor hooks set
        # around the checkpoint (an enclosing checkpoint's), else kept with their version.
        hooks = _saved.current()
        for value in args:
            if not isinstance(value, flambeau.Tensor):
                self.inputs.append((value, None))
            elif hooks is not None:
                self.inputs.append((_saved.pack(value, hooks), None))
            else:
                self.inputs.append((value, value._version))

    def restore_inputs(self) -> list:
        out = []
        for value, version in self.inputs:
            if version is not None and value._version != version:
                raise _modified("checkpoint", value, value._version, version)
            out.append(_saved.unpack(value))
        return out

    def pack(self, x) -> _Holder:
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        self.metadata.append(self.metadata_fn(x))
        if self.debug:
            self.sites.append(_call_site())
        return holder

    def unpack(self, holder: _Holder):
        key = _recomputation_key()
        if key not in self.recomputations:
            self._recompute(key)
        value = holder.values.get(key)
        if value is _CONSUMED:
            group = (
                "Performing two backward calls that overlap (i.e. require the same saved "
                "activation in order to compute gradients) is not allowed while under the "
                f"{_NAME}.GraphExecGroup context. "
                if GraphExecGroup._get_current_group() is not None
                else ""
            )
            raise CheckpointError(
                f"{_NAME}: Unpack is being triggered for a tensor that was already unpacked "
                f"once. {group}If you are calling ctx.saved_tensors in backward, make sure to "
                "do so only once. Otherwise please open an issue with details on your use case."
            )
        holder.values[key] = _CONSUMED  # handed out once: the graph drops it after use
        return value

    def _recompute(self, key) -> None:
        inputs = self.restore_inputs()
        run = _Recomputation()
        try:
            with _RecomputationHooks(self, key, run), enable_grad():
                self.recompute(*inputs)
        except _StopRecomputation:
            pass
        self.recomputations[key] = run
        try:
            self._check(key, run)
        except CheckpointError as e:
            if self.debug:
                raise CheckpointError(f"{e}\n{self._sites_report(run)}") from e
            raise

    def save_recomputed(self, x, key, run: _Recomputation):
        """The recomputation's pack hook: x goes to the holder at its position."""
        x = x.detach() if x.requires_grad else x
        index = run.count
        run.count += 1
        if self.debug:
            run.sites.append(_call_site())
        if index >= len(self.holders):
            if not self.forward_completed:
                # A backward inside the forward ran before the rest was saved.
                self.ignore_mismatch = True
                return x
            raise CheckpointError(
                f"{_NAME}: trying to save more tensors during recomputation than during the "
                f"original forward pass.{_DEBUG_TIP}"
            )
        holder = self.holders[index]()
        if holder is not None:  # None: backward already used and released it
            holder.values[key] = x
        if self.early_stop and run.count == len(self.holders):
            raise _StopRecomputation
        return x  # the recomputed graph (used by a backward inside the function) keeps it

    def _check(self, key, run: _Recomputation) -> None:
        if self.ignore_mismatch:
            return
        if run.count != len(self.holders):
            raise CheckpointError(
                f"{_NAME}: A different number of tensors was saved during the original forward "
                f"and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.holders)}\nNumber of tensors saved during recomputation: "
                f"{run.count}.{_DEBUG_TIP}"
            )
        different = []
        for index, (ref, saved) in enumerate(zip(self.holders, self.metadata)):
            holder = ref()
            if holder is None:
                continue
            recomputed = self.metadata_fn(holder.values[key])
            if recomputed != saved:
                different.append(
                    f"tensor at position {index}:\nsaved metadata: {saved}\n"
                    f"recomputed metadata: {recomputed}\n"
                )
        if different:
            raise CheckpointError(
                f"{_NAME}: Recomputed values for the following tensors have different "
                f"metadata than during the forward pass.\n{''.join(different)}{_DEBUG_TIP}"
            )

    def _sites_report(self, run: _Recomputation) -> str:
        def listing(sites):
            return "".join(f"  {i}: {site}\n" for i, site in enumerate(sites)) or "  (none)\n"

        return (
            "Tensors saved during the original forward, in order:\n"
            f"{listing(self.sites)}"
            "Tensors saved during the recomputation, in order:\n"
            f"{listing(run.sites)}"
        )


class _CheckpointHooks(_saved.saved_tensors_hooks):
    """Set during a checkpointed forward: saved tensors become holders."""

    # The graph keeps no tensor itself: what formulas read is packed, the rest is metadata.
    _packs_every_tensor = True

    def __init__(self, frame: _Frame):
        super().__init__(frame.pack, frame.unpack)


class _RecomputationHooks(_saved.saved_tensors_hooks):
    """Set during a recomputation: what it saves fills the forward's holders."""

    _packs_every_tensor = True

    def __init__(self, frame: _Frame, key, run: _Recomputation):
        super().__init__(lambda x: frame.save_recomputed(x, key, run), lambda x: x)


def _checkpoint_without_reentrant(
    function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
):
    if _debug_override if _debug_override is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        debug = True
    else:
        debug = False
    if determinism_check not in _METADATA:
        raise ValueError(
            f"determinism_check should be one of {list(_METADATA)}, but got {determinism_check}"
        )
    device_type = _infer_device_type(*args)
    random_state = _RandomState(preserve, device_type, args)
    forward_context, recompute_context = context_fn()
    if not flambeau.is_grad_enabled():
        return function(*args, **kwargs)
    autocast_state = _AutocastState(device_type)

    def recompute(*inputs):
        with random_state.restored(), autocast_state.restored(), recompute_context:
            function(*inputs, **kwargs)

    frame = _Frame(
        recompute,
        _early_stop_override if _early_stop_override is not None else early_stop,
        _METADATA[determinism_check],
        debug,
    )
    frame.save_inputs(args)
    suppressed = True
    with _CheckpointHooks(frame), forward_context:
        result = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            f"{_NAME}: the forward context provided by context_fn suppressed an exception "
            "raised during the checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward."
        )
    frame.forward_completed = True
    return result


# -- the entry points -----------------------------------------------------------------------


def _default_reentrant(caller: str) -> bool:
    warnings.warn(
        f"{caller}: the use_reentrant parameter should be passed explicitly. use_reentrant=False "
        "is recommended, but if you need to preserve the current default behavior, you can "
        "pass use_reentrant=True. Refer to docs for more details on the differences between "
        "the two variants.",
        stacklevel=3,
    )
    return True


def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs,
):
    """Runs ``function(*args, **kwargs)`` without keeping the tensors it saves for
    backward; backward recomputes them (see the module's docstring for the variants).

    ``preserve_rng_state=False`` skips saving and restoring the random state.
    ``context_fn()`` returns two context managers, for the forward and for the
    recomputation. ``determinism_check="default"`` compares the shapes, dtypes and
    devices of the recomputed tensors with the saved ones ("none": no check); ``debug``
    adds where each was saved to the error. The last three and keyword arguments for
    ``function`` need ``use_reentrant=False``.

    >>> from flambeau.utils.checkpoint import checkpoint
    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()  # recomputes t.sin() * t to get what it needs
    >>> x.grad  # sin(x) + x cos(x)
    tensor([1.3818, 0.0770])
    """
    if use_reentrant is None:
        use_reentrant = _default_reentrant(f"{_NAME}")
    if not use_reentrant:
        return _checkpoint_without_reentrant(
            function,
            preserve_rng_state,
            context_fn,
            determinism_check,
            debug,
            early_stop,
            args,
            kwargs,
        )
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not noop_context_fn or debug is not False:
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
        )
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def _is_sequential(functions) -> bool:
    nn = sys.modules.get("flambeau.nn")  # a Sequential means flambeau-nn is loaded
    return nn is not None and isinstance(functions, nn.Sequential)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Runs ``functions`` (a Sequential, or a list of modules or functions of one tensor)
    in order on ``input``, split into ``segments`` chunks of which all but the last are
    checkpointed. Takes ``preserve_rng_state`` too.

    >>> import flambeau.nn as nn
    >>> from flambeau.utils.checkpoint import checkpoint_sequential
    >>> model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> x = flambeau.ones(2, 4, requires_grad=True)
    >>> out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    >>> out.sum().backward()
    >>> out.shape, x.grad.shape
    (flambeau.Size([2, 1]), flambeau.Size([2, 4]))
    """
    if use_reentrant is None:
        use_reentrant = _default_reentrant(f"{_NAME}.checkpoint_sequential")
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if _is_sequential(functions):
        functions = list(functions.children())
    size = len(functions) // segments if segments > 0 else 0
    if size == 0:
        raise ValueError(
            f"checkpoint_sequential: segments must be between 1 and the number of functions "
            f"({len(functions)}), got {segments}"
        )

    def run(start: int, stop: int):
        def forward(x):
            for fn in functions[start:stop]:
                x = fn(x)
            return x

        return forward

    last = 0
    for start in range(0, size * (segments - 1), size):
        last = start + size
        input = checkpoint(  # noqa: A001
            run(start, last), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(last, len(functions))(input)
