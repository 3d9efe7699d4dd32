"""Nested containers ("pytrees"): flatten them to their leaves and rebuild them.

PyTorch's ``torch.utils._pytree``, which libraries import by that name (HuggingFace's
``ModelOutput`` registers itself with :func:`register_pytree_node`), with its semantics:

- The nodes are tuple, list, dict, namedtuple, OrderedDict, defaultdict and deque, the
  result tuples of ``flambeau.return_types``, and the types registered with
  :func:`register_pytree_node` (or :func:`register_dataclass`,
  :func:`register_constant`). Everything else is a leaf, ``None`` included.
- A dict's children come in its insertion order (PyTorch's Python pytree; its optree
  variant sorts keys).
- :class:`TreeSpec` is the structure of a flattened tree; its ``repr``, equality, hash
  and JSON form (:func:`treespec_dumps`) are PyTorch's, so a spec string written by
  ``torch.export`` tooling loads here and the other way round.

flambeau.func's transforms (``vmap``, ``grad``, ``jacrev``...) flatten their arguments
with this module, so a type registered here works through them as in PyTorch.

>>> import flambeau.utils._pytree as pytree
>>> leaves, spec = pytree.tree_flatten({"a": 1, "b": (2, [3, None])})
>>> leaves
[1, 2, 3, None]
>>> spec
TreeSpec(dict, ['a', 'b'], [*,
  TreeSpec(tuple, None, [*,
    TreeSpec(list, None, [*,
      *])])])
>>> pytree.tree_unflatten([x * 10 for x in leaves[:3]] + [None], spec)
{'a': 10, 'b': (20, [30, None])}
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

__all__ = [
    "PyTree",
    "Context",
    "FlattenFn",
    "UnflattenFn",
    "DumpableContext",
    "ToDumpableContextFn",
    "FromDumpableContextFn",
    "PyTreeSpec",
    "TreeSpec",
    "LeafSpec",
    "keystr",
    "key_get",
    "register_pytree_node",
    "tree_is_leaf",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_structure",
    "tree_map",
    "tree_map_with_path",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_dumps",
    "treespec_loads",
    "treespec_pprint",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "is_structseq",
    "is_structseq_class",
    "is_structseq_instance",
]

T = TypeVar("T")
S = TypeVar("S")
U = TypeVar("U")
R = TypeVar("R")
K = TypeVar("K", bound=Hashable)
_T_co = TypeVar("_T_co", covariant=True)

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"

# The aliases PyTorch's annotations use.
Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any  # anything json.dumps writes
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[Any, Any]], Any]]
FlattenFunc = FlattenFn
UnflattenFunc = UnflattenFn
FlattenWithKeysFunc = FlattenWithKeysFn


class KeyEntry(Protocol):
    """One step of a key path: ``str`` of it is how :func:`keystr` writes it, ``get``
    takes the step."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]


class NodeDef(NamedTuple):
    """How a registered node type flattens (``flatten_fn``), rebuilds (``unflatten_fn``)
    and names its children (``flatten_with_keys_fn``, None when it cannot)."""

    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict[Any, NodeDef] = {}
SUPPORTED_SERIALIZED_TYPES: dict[Any, _SerializeNodeDef] = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict[str, Any] = {}
CONSTANT_NODES: set[type] = set()


# --------------------------------------------------------------------------- registry


def register_pytree_node(
    cls: type[Any],
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: ToDumpableContextFn | None = None,
    from_dumpable_context: FromDumpableContextFn | None = None,
    flatten_with_keys_fn: FlattenWithKeysFn | None = None,
) -> None:
    """Registers ``cls`` as a node: ``flatten_fn(obj)`` gives ``(children, context)`` and
    ``unflatten_fn(children, context)`` rebuilds it.

    ``flatten_with_keys_fn(obj)`` gives ``([(key, child), ...], context)``, the key
    being a :class:`SequenceKey`, :class:`MappingKey`, :class:`GetAttrKey` or any
    object with ``__str__`` and ``get`` (needed by the ``*_with_path`` functions).
    ``serialized_type_name`` and the ``*_dumpable_context`` pair let
    :func:`treespec_dumps` write the type. Registering a type twice is a ValueError.

    >>> import flambeau.utils._pytree as pytree
    >>> class Pair:
    ...     def __init__(self, first, second):
    ...         self.first, self.second = first, second
    >>> pytree.register_pytree_node(
    ...     Pair,
    ...     lambda p: ([p.first, p.second], None),
    ...     lambda children, _: Pair(*children),
    ...     flatten_with_keys_fn=lambda p: (
    ...         [(pytree.GetAttrKey("first"), p.first), (pytree.GetAttrKey("second"), p.second)],
    ...         None,
    ...     ),
    ... )
    >>> pytree.tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    >>> doubled = pytree.tree_map(lambda x: 2 * x, Pair(1, (2, 3)))
    >>> doubled.first, doubled.second
    (2, (4, 6))
    >>> [pytree.keystr(path) for path, _ in pytree.tree_leaves_with_path(Pair(1, 2))]
    ['.first', '.second']
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
        _private_register_pytree_node(
            cls,
            flatten_fn,
            unflatten_fn,
            serialized_type_name=serialized_type_name,
            to_dumpable_context=to_dumpable_context,
            from_dumpable_context=from_dumpable_context,
            flatten_with_keys_fn=flatten_with_keys_fn,
        )


def _register_pytree_node(
    cls: type[Any],
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    to_str_fn=None,
    maybe_from_str_fn=None,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: ToDumpableContextFn | None = None,
    from_dumpable_context: FromDumpableContextFn | None = None,
    flatten_with_keys_fn: FlattenWithKeysFn | None = None,
) -> None:
    """The older name of :func:`register_pytree_node` (it warns, FutureWarning); a type
    registered before is registered again, with a UserWarning."""
    warnings.warn(
        "`torch.utils._pytree._register_pytree_node` is deprecated. "
        "Please use `torch.utils._pytree.register_pytree_node` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn(
            "`to_str_fn` and `maybe_from_str_fn` is deprecated. "
            "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
            FutureWarning,
            stacklevel=2,
        )
    _private_register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        to_dumpable_context=to_dumpable_context,
        from_dumpable_context=from_dumpable_context,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _private_register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
) -> None:
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(
                f"{cls} is already registered as pytree node. "
                "Overwriting the previous registration.",
                stacklevel=3,
            )
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) != (from_dumpable_context is None):
            raise ValueError(
                f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                "be None or registered."
            )
        name = (
            NO_SERIALIZED_TYPE_NAME_FOUND
            if serialized_type_name is None
            else (serialized_type_name)
        )
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(
            cls, name, to_dumpable_context, from_dumpable_context
        )
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _deregister_pytree_node(cls) -> None:
    """Forgets a registration (PyTorch's private helper, for tests)."""
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        entry = SUPPORTED_SERIALIZED_TYPES.pop(cls, None)
        if (
            entry is not None
            and SERIALIZED_TYPE_TO_PYTHON_TYPE.get(entry.serialized_type_name) is cls
        ):
            del SERIALIZED_TYPE_TO_PYTHON_TYPE[entry.serialized_type_name]
        CONSTANT_NODES.discard(cls)


def register_dataclass(
    cls: type[Any],
    *,
    field_names: list[str] | None = None,
    drop_field_names: list[str] | None = None,
    serialized_type_name: str | None = None,
) -> None:
    """Registers a dataclass (or a class built from keyword fields) as a node whose
    children are its fields; a field holding None is kept in the context, not a leaf.

    >>> import dataclasses
    >>> import flambeau.utils._pytree as pytree
    >>> @dataclasses.dataclass
    ... class Point:
    ...     x: object
    ...     y: object
    >>> pytree.register_dataclass(Point)
    >>> pytree.tree_map(lambda v: v + 1, Point(1, 2))
    Point(x=2, y=3)
    """
    drop = set(drop_field_names or ())
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError(
                "field_names must be specified with a list of all fields used to "
                f"initialize {cls}, as it is not a dataclass."
            )
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - drop
        if init_fields != set(field_names):
            message = "field_names does not include all dataclass fields.\n"
            if missing := init_fields - set(field_names):
                message += (
                    f"Missing fields in `field_names`: {missing}. If you want "
                    "to include these fields in the pytree, please add them "
                    "to `field_names`, otherwise please add them to "
                    "`drop_field_names`.\n"
                )
            if unexpected := set(field_names) - init_fields:
                message += (
                    f"Unexpected fields in `field_names`: {unexpected}. "
                    "Please remove these fields, or add them to `drop_field_names`.\n"
                )
            raise ValueError(message)
    names = list(field_names)

    def flatten(obj):
        values, present, absent = [], [], []
        for name in names:
            value = getattr(obj, name)
            if value is None:
                absent.append(name)
            else:
                values.append(value)
                present.append(name)
        return values, [present, absent]

    def unflatten(values, context):
        present, absent = context
        kwargs = dict(zip(present, values, strict=True))
        kwargs.update(dict.fromkeys(absent))
        return cls(**kwargs)

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values, strict=True)], present

    _private_register_pytree_node(
        cls,
        flatten,
        unflatten,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode(Generic[T]):
    """The context of a :func:`register_constant` type's spec: the instance itself."""

    value: T


def register_constant(cls: type[Any]) -> None:
    """Registers ``cls`` as a node with no children: an instance flattens to no leaves
    and its spec holds the instance itself (so ``cls`` needs ``__eq__`` and ``__hash__``).

    >>> import dataclasses
    >>> import flambeau.utils._pytree as pytree
    >>> @dataclasses.dataclass(frozen=True)
    ... class Config:
    ...     norm: str
    >>> pytree.register_constant(Config)
    >>> leaves, spec = pytree.tree_flatten((Config("l2"), 1))
    >>> leaves
    [1]
    >>> pytree.tree_unflatten([5], spec)
    (Config(norm='l2'), 5)
    """
    if cls.__eq__ is object.__eq__:
        raise TypeError(
            "register_constant(cls) expects `cls` to have a non-default `__eq__` implementation."
        )
    if cls.__hash__ is None:
        raise TypeError(
            "register_constant(cls) expects `cls` to have a non-default `__hash__` implementation."
        )

    def flatten(obj):
        return [], ConstantNode(obj)

    def unflatten(_, context):
        return context.value

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls) -> bool:
    """Whether ``cls`` was registered with :func:`register_constant`."""
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _is_constant_holder(spec: TreeSpec) -> bool:
    return isinstance(spec._context, ConstantNode)


def _retrieve_constant(spec: TreeSpec) -> Any:
    if not _is_constant_holder(spec):
        raise AssertionError("spec does not correspond to a registered constant pytree")
    return tree_unflatten([], spec)


def _register_namedtuple(cls: type[Any], *, serialized_type_name: str) -> None:
    """Gives a namedtuple class a serialized name, so specs holding it can be dumped."""
    _private_register_pytree_node(
        cls,
        _namedtuple_flatten,
        _namedtuple_unflatten,
        serialized_type_name=serialized_type_name,
        to_dumpable_context=_namedtuple_serialize,
        from_dumpable_context=_namedtuple_deserialize,
        flatten_with_keys_fn=_namedtuple_flatten_with_keys,
    )


# --------------------------------------------------------------------------- key paths


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(Generic[T]):
    """A position in a sequence (tuple, list, deque): written ``[0]``.

    >>> from flambeau.utils._pytree import SequenceKey
    >>> str(SequenceKey(1)), SequenceKey(1).get(["a", "b"])
    ('[1]', 'b')
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Sequence[T]) -> T:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey(Generic[K, T]):
    """A key of a mapping: written ``['name']``.

    >>> from flambeau.utils._pytree import MappingKey
    >>> str(MappingKey("w")), MappingKey("w").get({"w": 3})
    ("['w']", 3)
    """

    key: K

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Mapping[K, T]) -> T:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """An attribute (a namedtuple's field, a dataclass's): written ``.name``.

    >>> from collections import namedtuple
    >>> from flambeau.utils._pytree import GetAttrKey
    >>> P = namedtuple("P", "x y")
    >>> str(GetAttrKey("y")), GetAttrKey("y").get(P(1, 2))
    ('.y', 2)
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def keystr(kp: KeyPath) -> str:
    """A key path as text.

    >>> import flambeau.utils._pytree as pytree
    >>> [(pytree.keystr(p), v) for p, v in pytree.tree_leaves_with_path({"a": [1, (2,)]})]
    [("['a'][0]", 1), ("['a'][1][0]", 2)]
    """
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The value at key path ``kp`` of ``obj``.

    >>> import flambeau.utils._pytree as pytree
    >>> tree = {"a": [1, (2, 3)]}
    >>> path, _ = pytree.tree_leaves_with_path(tree)[2]
    >>> pytree.key_get(tree, path)
    3
    """
    for k in kp:
        obj = k.get(obj)
    return obj


# --------------------------------------------------------------------------- type checks


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a namedtuple class (a tuple subclass with string ``_fields``,
    ``_make`` and ``_asdict``).

    >>> from collections import namedtuple
    >>> from flambeau.utils._pytree import is_namedtuple_class
    >>> is_namedtuple_class(namedtuple("P", "x y")), is_namedtuple_class(tuple)
    (True, False)
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        return False
    fields = getattr(cls, "_fields", None)
    return (
        isinstance(fields, tuple)
        and all(type(f) is str for f in fields)
        and callable(getattr(cls, "_make", None))
        and callable(getattr(cls, "_asdict", None))
    )


def is_namedtuple(obj: object) -> bool:
    """Whether ``obj`` is a namedtuple class or an instance of one.

    >>> from collections import namedtuple
    >>> from flambeau.utils._pytree import is_namedtuple
    >>> P = namedtuple("P", "x y")
    >>> is_namedtuple(P), is_namedtuple(P(1, 2)), is_namedtuple((1, 2))
    (True, True, False)
    """
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj: object) -> bool:
    """Whether ``obj`` is an instance of a namedtuple class.

    >>> from collections import namedtuple
    >>> from flambeau.utils._pytree import is_namedtuple_instance
    >>> P = namedtuple("P", "x y")
    >>> is_namedtuple_instance(P(1, 2)), is_namedtuple_instance(P)
    (True, False)
    """
    return is_namedtuple_class(type(obj))


class structseq(tuple[_T_co, ...]):  # noqa: N801 - PyTorch's (and optree's) name
    """The type of CPython's struct sequences (``os.stat_result``, ``time.struct_time``),
    for annotations; it cannot be subclassed or made (test with :func:`is_structseq`).

    >>> import time
    >>> from flambeau.utils._pytree import is_structseq, structseq
    >>> is_structseq(time.gmtime(0)), issubclass(structseq, tuple)
    (True, True)
    """

    __slots__ = ()

    def __init_subclass__(cls):
        raise TypeError("type 'structseq' is not an acceptable base type")

    def __new__(cls, sequence, dict=...):  # noqa: A002
        raise NotImplementedError


# Set when a type can be subclassed (CPython's Include/object.h).
Py_TPFLAGS_BASETYPE: int = 1 << 10


def is_structseq_class(cls: type) -> bool:
    """Whether ``cls`` is a C struct sequence type (``os.stat_result``,
    ``time.struct_time``): a final, direct tuple subclass with ``n_fields``.

    >>> import time
    >>> from flambeau.utils._pytree import is_structseq_class
    >>> is_structseq_class(time.struct_time), is_structseq_class(tuple)
    (True, False)
    """
    return (
        isinstance(cls, type)
        and cls.__bases__ == (tuple,)
        and all(
            isinstance(getattr(cls, a, None), int)
            for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields")
        )
        and not cls.__flags__ & Py_TPFLAGS_BASETYPE
    )


def is_structseq(obj: object) -> bool:
    """Whether ``obj`` is a struct sequence type or an instance of one.

    >>> import time
    >>> from flambeau.utils._pytree import is_structseq
    >>> is_structseq(time.gmtime(0)), is_structseq(time.struct_time), is_structseq(())
    (True, True, False)
    """
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj: object) -> bool:
    """Whether ``obj`` is an instance of a struct sequence type.

    >>> import time
    >>> from flambeau.utils._pytree import is_structseq_instance
    >>> is_structseq_instance(time.gmtime(0)), is_structseq_instance(time.struct_time)
    (True, False)
    """
    return is_structseq_class(type(obj))


# --------------------------------------------------------------------------- built-in nodes


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    keys = list(d.keys())
    return [(MappingKey(k), d[k]) for k in keys], keys


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    cls = type(d)
    return [(GetAttrKey(f), v) for f, v in zip(cls._fields, d, strict=True)], cls


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    entry = SUPPORTED_SERIALIZED_TYPES.get(context)
    if entry is None:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we "
            "didn't register a serializated_type_name. Please register using "
            "`_register_namedtuple`."
        )
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we "
            "couldn't find a serializated_type_name. Please register using "
            "`_register_namedtuple`."
        )
    return entry.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(
            f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} "
            "because we couldn't find a serializated name."
        )
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    pairs, keys = _dict_flatten_with_keys(d)
    return pairs, [d.default_factory, keys]


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, _dict_unflatten(values, keys))


def _defaultdict_serialize(context):
    factory, keys = context
    return {
        "default_factory_module": factory.__module__,
        "default_factory_name": factory.__qualname__,
        "dict_context": keys,
    }


def _defaultdict_deserialize(dumpable_context):
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if set(dumpable_context) != expected:
        raise AssertionError(
            f"dumpable_context keys must be {expected}, got {set(dumpable_context)}"
        )
    module_name = dumpable_context["default_factory_module"]
    name = dumpable_context["default_factory_name"]
    if not isinstance(module_name, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(name, str):
        raise AssertionError("default_factory_name must be a string")
    factory = getattr(importlib.import_module(module_name), name)
    return [factory, dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_private_register_pytree_node(
    tuple,
    _tuple_flatten,
    _tuple_unflatten,
    serialized_type_name="builtins.tuple",
    flatten_with_keys_fn=_tuple_flatten_with_keys,
)
_private_register_pytree_node(
    list,
    _list_flatten,
    _list_unflatten,
    serialized_type_name="builtins.list",
    flatten_with_keys_fn=_list_flatten_with_keys,
)
_private_register_pytree_node(
    dict,
    _dict_flatten,
    _dict_unflatten,
    serialized_type_name="builtins.dict",
    flatten_with_keys_fn=_dict_flatten_with_keys,
)
_private_register_pytree_node(
    namedtuple,
    _namedtuple_flatten,
    _namedtuple_unflatten,
    serialized_type_name="collections.namedtuple",
    to_dumpable_context=_namedtuple_serialize,
    from_dumpable_context=_namedtuple_deserialize,
    flatten_with_keys_fn=_namedtuple_flatten_with_keys,
)
_private_register_pytree_node(
    OrderedDict,
    _dict_flatten,
    _ordereddict_unflatten,
    serialized_type_name="collections.OrderedDict",
    flatten_with_keys_fn=_dict_flatten_with_keys,
)
_private_register_pytree_node(
    defaultdict,
    _defaultdict_flatten,
    _defaultdict_unflatten,
    serialized_type_name="collections.defaultdict",
    to_dumpable_context=_defaultdict_serialize,
    from_dumpable_context=_defaultdict_deserialize,
    flatten_with_keys_fn=_defaultdict_flatten_with_keys,
)
_private_register_pytree_node(
    deque,
    _deque_flatten,
    _deque_unflatten,
    serialized_type_name="collections.deque",
    flatten_with_keys_fn=_deque_flatten_with_keys,
)

STANDARD_DICT_TYPES: frozenset = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES: frozenset = frozenset(
    {tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque}
)


# flambeau.return_types' result tuples are namedtuples made by the core; PyTorch's are C
# struct sequences that torch.return_types registers as nodes of their own type (context
# None, positional keys). They get the same registration here, on first sight.
def _return_type_flatten(d):
    return list(d), None


def _return_type_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _register_return_type(cls) -> None:
    def unflatten(values, context):
        return cls(*values)

    with _NODE_REGISTRY_LOCK:
        if cls not in SUPPORTED_NODES:
            _private_register_pytree_node(
                cls,
                _return_type_flatten,
                unflatten,
                flatten_with_keys_fn=_return_type_flatten_with_keys,
            )


# Types that are never namedtuples, looked up without the namedtuple test.
_FAST_NODE_TYPES = frozenset({tuple, list, dict, OrderedDict, defaultdict, deque})


def _get_node_type(tree: Any) -> Any:
    node_type = type(tree)
    if node_type in _FAST_NODE_TYPES:
        return node_type
    if is_namedtuple_class(node_type):
        # Every namedtuple is a node of type `namedtuple` (its class is the context),
        # registered explicitly or not, as in PyTorch; flambeau's result tuples are
        # PyTorch's structseqs.
        if node_type.__module__ == "flambeau.return_types":
            if node_type not in SUPPORTED_NODES:
                _register_return_type(node_type)
            return node_type
        return namedtuple
    return node_type


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a registered node type, or ``is_leaf(tree)``.

    >>> from flambeau.utils._pytree import tree_is_leaf
    >>> tree_is_leaf(1), tree_is_leaf(None), tree_is_leaf([1, 2])
    (True, True, False)
    >>> tree_is_leaf((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    True
    """
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree: PyTree, is_leaf=None) -> bool:
    warnings.warn(
        "torch.utils._pytree._is_leaf is private and will be removed in a future release. "
        "Please use torch.utils._pytree.tree_is_leaf instead.",
        FutureWarning,
        stacklevel=2,
    )
    return tree_is_leaf(tree, is_leaf=is_leaf)


def _is_namedtuple_instance(tree: Any) -> bool:
    warnings.warn(
        "torch.utils._pytree._is_namedtuple_instance is private and will be removed in a "
        "future release. Please use torch.utils._pytree.is_namedtuple_instance instead.",
        FutureWarning,
        stacklevel=2,
    )
    return is_namedtuple_instance(tree)


# --------------------------------------------------------------------------- TreeSpec


def _node_children_like(spec: TreeSpec, node: Any) -> list:
    """The children of ``node`` in the order of ``spec``'s children, when node is a node
    of spec's kind (dict types interchange, matched by key; a deque's maxlen and a
    defaultdict's factory may differ); ValueError naming the mismatch otherwise."""
    node_type = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:
        if node_type != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(
                f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}."
            )
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
        return list(children)
    both_dicts = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
    if not both_dicts and node_type != spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {node_type!r}.")
    if len(node) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
    if both_dicts:
        keys = spec._context[1] if spec.type is defaultdict else spec._context
        got, expected = set(node), set(keys)
        if got != expected:
            message = ""
            if missing := expected - got:
                message += f"; missing key(s): {missing}"
            if extra := got - expected:
                message += f"; extra key(s): {extra}"
            raise ValueError(f"Node keys mismatch{message}.")
        return [node[k] for k in keys]
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    if node_type is not deque and context != spec._context:
        raise ValueError(
            f"Node context mismatch for node type {spec.type!r}; "
            f"expected {spec._context!r}, but got {context!r}."
        )
    return list(children)


@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """The structure of a pytree: the root's node ``type`` (None for a leaf), its
    ``context`` (a dict's keys, a namedtuple's class, ...) and its children's specs.

    ``num_leaves``, ``num_nodes`` and ``num_children`` count them; ``unflatten(leaves)``
    rebuilds a tree, ``flatten_up_to(tree)`` takes the subtrees of a tree at this spec's
    leaves. Specs are immutable, hashable, and equal when type, context and children
    are.

    >>> import flambeau.utils._pytree as pytree
    >>> spec = pytree.tree_structure((1, [2, 3]))
    >>> spec
    TreeSpec(tuple, None, [*,
      TreeSpec(list, None, [*,
        *])])
    >>> spec.num_leaves, spec.num_nodes, spec.num_children, spec.child(1).type
    (3, 5, 2, <class 'list'>)
    >>> spec.unflatten("abc")
    ('a', ['b', 'c'])
    >>> spec.flatten_up_to(((1, 2), [3, {"x": 4}]))
    [(1, 2), 3, {'x': 4}]
    >>> spec == pytree.tree_structure(("p", ["q", "r"]))
    True
    """

    type: Any
    _context: Any
    _children: list
    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type: Any, context: Context, children_specs: list) -> None:  # noqa: A002
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.type is None:
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(self._children) != 0:
                raise AssertionError("leaf node should not have children")
            nodes = leaves = 1
        else:
            nodes, leaves = 1, 0
            for child in self._children:
                nodes += child.num_nodes
                leaves += child.num_leaves
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", 0 if self.type is None else len(self._children))

    def __repr__(self, indent: int = 0) -> str:
        text = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self._children:
            inner = indent + 2
            parts = [self._children[0].__repr__(inner)]
            parts += ["\n" + " " * inner + c.__repr__(inner) for c in self._children[1:]]
            text += ",".join(parts)
        return text + "])"

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            str(self.type) == str(other.type)
            and self._context == other._context
            and self._children == other._children
        )

    def __hash__(self) -> int:
        node_type = self.type
        if node_type is defaultdict:
            factory, keys = self._context
            context = (factory, tuple(keys))
        elif node_type in (dict, OrderedDict):
            context = tuple(self._context)
        elif node_type is None or node_type in BUILTIN_TYPES:
            context = self._context
        elif isinstance(self._context, ConstantNode):
            context = self._context.value
        else:  # a custom node's context may be unhashable; equal specs still hash alike
            context = None
        return hash((node_type, context, tuple(self._children)))

    @property
    def context(self) -> Context:
        """The root's context (None for a leaf)."""
        return self._context

    @property
    def children_specs(self) -> list:
        """The children's specs (deprecated in PyTorch: use ``children()``)."""
        warnings.warn(
            "`treespec.children_specs` is deprecated. "
            "Use `treespec.child(index)` to access a single child, "
            "or `treespec.children()` to get all children.",
            FutureWarning,
            stacklevel=2,
        )
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list:
        """A list of the children's specs."""
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        """The spec of child ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of ``tree`` at this spec's leaves, when ``tree`` has this spec's
        structure down to them (dicts matched by key); ValueError otherwise."""
        out: list = []

        def walk(spec, node):
            if spec.is_leaf():
                out.append(node)
                return
            for subspec, child in zip(spec._children, _node_children_like(spec, node)):
                walk(subspec, child)

        walk(self, tree)
        return out

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The tree of this structure holding ``leaves`` in order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                f"but the spec refers to a pytree that holds {self.num_leaves} "
                f"items ({self}).",
            )
        return self._build(leaves, 0)

    def _build(self, leaves, start: int):
        if self.is_leaf():
            return leaves[start]
        children = []
        for child in self._children:
            children.append(child._build(leaves, start))
            start += child.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf, printed ``*`` (PyTorch deprecates the class, FutureWarning on
    construction: test ``spec.is_leaf()`` instead).

    >>> import flambeau.utils._pytree as pytree
    >>> spec = pytree.tree_structure(3)
    >>> spec, spec.is_leaf(), spec.num_leaves
    (*, True, 1)
    """

    __slots__ = ()

    def __init__(self) -> None:
        if _LEAF_SPEC_MADE:
            warnings.warn(
                "`isinstance(treespec, LeafSpec)` is deprecated, "
                "use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                FutureWarning,
                stacklevel=2,
            )
        super().__init__(None, None, [])

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF_SPEC_MADE = False
_LEAF_SPEC = LeafSpec()
_LEAF_SPEC_MADE = True


def treespec_leaf() -> LeafSpec:
    """The spec of a leaf."""
    return _LEAF_SPEC


def treespec_tuple(iterable: Iterable[TreeSpec] = (), /) -> TreeSpec:
    """A tuple's spec from its children's specs."""
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs) -> TreeSpec:
    """A dict's spec from its children's specs by key."""
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# --------------------------------------------------------------------------- flatten, map


def tree_flatten(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure.

    ``is_leaf(node)`` returning True makes a node a leaf whole.

    >>> from collections import OrderedDict, namedtuple
    >>> from flambeau.utils._pytree import tree_flatten
    >>> P = namedtuple("P", "x y")
    >>> leaves, spec = tree_flatten([P(1, (2, 3)), OrderedDict(b=4, a=5)])
    >>> leaves
    [1, 2, 3, 4, 5]
    >>> tree_flatten([(1, 2), (3, 4)], is_leaf=lambda n: isinstance(n, tuple))[0]
    [(1, 2), (3, 4)]
    """
    leaves: list = []

    def walk(node):
        if is_leaf is not None and is_leaf(node):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        entry = SUPPORTED_NODES.get(node_type)
        if entry is None:
            leaves.append(node)
            return _LEAF_SPEC
        children, context = entry.flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The tree of structure ``treespec`` holding ``leaves`` in order (the inverse of
    :func:`tree_flatten`); a wrong number of leaves is a ValueError.

    >>> from flambeau.utils._pytree import tree_flatten, tree_unflatten
    >>> leaves, spec = tree_flatten({"w": [1, 2], "b": 3})
    >>> tree_unflatten([10, 20, 30], spec)
    {'w': [10, 20], 'b': 30}
    """
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(
                "Expected `treespec` to be an instance of "
                f"PyTreeSpec but got item of type {type(treespec)}."
            )
        leaves, treespec = treespec, leaves  # PyTorch accepts them swapped
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterable[Any]:
    """An iterator over the leaves of ``tree``.

    >>> from flambeau.utils._pytree import tree_iter
    >>> list(tree_iter({"a": (1, 2), "b": [3]}))
    [1, 2, 3]
    """
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order.

    >>> from flambeau.utils._pytree import tree_leaves
    >>> tree_leaves([None, (1, {"k": 2}), []])
    [None, 1, 2]
    """
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The :class:`TreeSpec` of ``tree``.

    >>> from flambeau.utils._pytree import tree_structure
    >>> tree_structure({"a": 1, "b": 2})
    TreeSpec(dict, ['a', 'b'], [*,
      *])
    """
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """A tree of ``tree``'s structure holding ``func(leaf, *leaves of rests)``.

    Each of ``rests`` has ``tree``'s structure or extends it: its subtree at a leaf of
    ``tree`` is what ``func`` gets.

    >>> from flambeau.utils._pytree import tree_map
    >>> tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)})
    {'x': 8, 'y': (43, 65)}
    >>> tree_map(lambda x: x is None, {"x": 7, "z": None})
    {'x': False, 'z': True}
    >>> tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    [[5, 7, 9], [6, 1, 2]]
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(list(map(func, *columns)))


def tree_map_(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """Calls ``func`` on each leaf (with the matching subtrees of ``rests``) for its
    side effect, and returns ``tree`` itself.

    >>> from flambeau.utils._pytree import tree_map_
    >>> seen = []
    >>> tree = {"a": [1, 2]}
    >>> tree_map_(seen.append, tree) is tree, seen
    (True, [1, 2])
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*columns):
        func(*args)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: the function applies to values of the given type(s) (or for which
    the predicate holds) and returns any other value unchanged.

    >>> from flambeau.utils._pytree import map_only
    >>> @map_only(int)
    ... def double(x):
    ...     return 2 * x
    >>> double(3), double("a")
    (6, 'a')
    """
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        types_ = type_or_types_or_pred

        def pred(x):
            return isinstance(x, types_)

    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None) -> PyTree:
    """:func:`tree_map` applying ``func`` only to leaves of the given type(s) (or that
    satisfy a predicate); other leaves are kept.

    >>> from flambeau.utils._pytree import tree_map_only
    >>> tree_map_only(int, lambda x: x * 10, [1, "a", (2.5, 3)])
    [10, 'a', (2.5, 30)]
    >>> tree_map_only(lambda x: x == 2, str, [1, 2])
    [1, '2']
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None) -> PyTree:
    """:func:`tree_map_` calling ``func`` only on leaves of the given type(s); returns
    ``tree``.

    >>> from flambeau.utils._pytree import tree_map_only_
    >>> seen = []
    >>> _ = tree_map_only_(str, seen.append, [1, "a", ("b", 2)])
    >>> seen
    ['a', 'b']
    """
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for every leaf (True for a tree without leaves).

    >>> from flambeau.utils._pytree import tree_all
    >>> tree_all(lambda x: x > 0, [1, (2, 3)]), tree_all(lambda x: x > 1, [1, 2])
    (True, False)
    """
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for some leaf.

    >>> from flambeau.utils._pytree import tree_any
    >>> tree_any(lambda x: x is None, {"a": 1, "b": None})
    True
    """
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for every leaf of the given type(s); other leaves are
    not asked.

    >>> from flambeau.utils._pytree import tree_all_only
    >>> tree_all_only(int, lambda x: x > 0, [1, "a", 2])
    True
    """
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    """Whether ``pred`` holds for some leaf of the given type(s).

    >>> from flambeau.utils._pytree import tree_any_only
    >>> tree_any_only(str, lambda s: s.startswith("b"), [1, "a", ("b",)])
    True
    """
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree: PyTree, treespec: TreeSpec, is_leaf=None) -> list | None:
    """``tree``, a prefix of the structure ``treespec``, with each of its leaves repeated
    for every leaf of the subtree it stands for; None when it is not a prefix."""
    full = treespec.unflatten([0] * treespec.num_leaves)
    out: list = []

    def spread(value, subtree):
        out.extend([value] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)

    try:
        tree_map_(spread, tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list[Any]:
    """The leaves of ``(args, kwargs)`` (what ``tree_leaves((args, kwargs))`` gives).

    >>> from flambeau.utils._pytree import arg_tree_leaves
    >>> arg_tree_leaves(1, [2, 3], k=(4,))
    [1, 2, 3, 4]
    """
    leaves: list = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves


# --------------------------------------------------------------------------- key paths


def _key_paths(path: tuple, tree: PyTree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    node_type = _get_node_type(tree)
    entry = SUPPORTED_NODES.get(node_type)
    if entry is None:
        yield path, tree
        return
    if entry.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node_type}. "
            "Please pass a flatten_with_keys_fn argument to register_pytree_node."
        )
    pairs, _ = entry.flatten_with_keys_fn(tree)
    for key, child in pairs:
        yield from _key_paths((*path, key), child, is_leaf)


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """Like :func:`tree_flatten`, each leaf paired with its key path.

    >>> from flambeau.utils._pytree import keystr, tree_flatten_with_path
    >>> pairs, spec = tree_flatten_with_path({"a": (1, 2)})
    >>> [(keystr(path), leaf) for path, leaf in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> list[tuple[KeyPath, Any]]:
    """``(key path, leaf)`` for each leaf of ``tree``.

    >>> from flambeau.utils._pytree import tree_leaves_with_path
    >>> tree_leaves_with_path([1, {"b": 2}])
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), MappingKey(key='b')), 2)]
    """
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """Like :func:`tree_map`, ``func`` getting each leaf's key path first.

    >>> from flambeau.utils._pytree import keystr, tree_map_with_path
    >>> tree_map_with_path(lambda path, x: f"{keystr(path)}={x}", {"a": [1, 2]})
    {'a': ["['a'][0]=1", "['a'][1]=2"]}
    """
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in pairs], [v for _, v in pairs]]
    columns += [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten([func(*args) for args in zip(*columns)])


# --------------------------------------------------------------------------- JSON


class EnumEncoder(json.JSONEncoder):
    """Writes an Enum member as its class's import path and its name."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {
                "__enum__": True,
                "fqn": f"{obj.__class__.__module__}:{obj.__class__.__qualname__}",
                "name": obj.name,
            }
        return super().default(obj)


def enum_object_hook(obj: dict) -> Any:
    """Reads what :class:`EnumEncoder` wrote back into the Enum member."""
    if "__enum__" in obj:
        module_name, _, qualname = obj["fqn"].partition(":")
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
        return target[obj["name"]]
    return obj


def _treespec_to_json(spec: TreeSpec) -> dict:
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    entry = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if entry is None:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {spec.type} found. "
            "Please update your _register_pytree_node call with a `serialized_type_name` kwarg."
        )
    if entry.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError(
                "Unable to serialize context. "
                "Please make the context json dump-able, or register a "
                "custom serializer using _register_pytree_node."
            ) from e
    else:
        context = entry.to_dumpable_context(spec._context)
    return {
        "type": entry.serialized_type_name,
        "context": context,
        "children_spec": [_treespec_to_json(c) for c in spec._children],
    }


def _json_to_treespec(schema: dict) -> TreeSpec:
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(
            f"Deserializing {schema['type']} in pytree is not registered.",
        )
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    entry = SUPPORTED_SERIALIZED_TYPES[typ]
    if entry.from_dumpable_context is None:
        try:
            context = json.loads(schema["context"], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError(
                "Unable to deserialize context. "
                "Please make the context json load-able, or register a "
                "custom serializer using _register_pytree_node.",
            ) from e
    else:
        context = entry.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema["children_spec"]])


_SUPPORTED_PROTOCOLS = {1: (_treespec_to_json, _json_to_treespec)}


def _unknown_protocol(protocol) -> ValueError:
    return ValueError(
        f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS)}",
    )


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """``treespec`` as a JSON string (PyTorch's format, protocol 1); every node type in
    it needs a serialized name (the built-ins have one).

    >>> from flambeau.utils._pytree import treespec_dumps, treespec_loads, tree_structure
    >>> text = treespec_dumps(tree_structure((1, {"a": 2})))
    >>> text[:60]
    '[1, {"type": "builtins.tuple", "context": "null", "children_'
    >>> treespec_loads(text) == tree_structure((0, {"a": 0}))
    True
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            "Expected `treespec` to be an instance of "
            f"PyTreeSpec but got item of type {type(treespec)}."
        )
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    schema = _SUPPORTED_PROTOCOLS[protocol][0](treespec)
    return json.dumps((protocol, schema), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized: str) -> TreeSpec:
    """The :class:`TreeSpec` a :func:`treespec_dumps` string holds.

    >>> from flambeau.utils._pytree import treespec_dumps, treespec_loads, tree_structure
    >>> spec = tree_structure([1, (2, 3)])
    >>> treespec_loads(treespec_dumps(spec)) == spec
    True
    """
    protocol, schema = json.loads(serialized)
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return _SUPPORTED_PROTOCOLS[protocol][1](schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self) -> str:
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec: TreeSpec) -> str:
    """``treespec`` written as its tree with ``*`` for each leaf.

    >>> from flambeau.utils._pytree import tree_structure, treespec_pprint
    >>> treespec_pprint(tree_structure({"a": (1, [2, 3]), "b": 4}))
    "{'a': (*, [*, *]), 'b': *}"
    """
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))


def pytree_to_str(treespec: TreeSpec) -> str:
    """Deprecated name of :func:`treespec_dumps`."""
    warnings.warn(
        "`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return treespec_dumps(treespec)


def str_to_pytree(json: str) -> TreeSpec:  # noqa: A002 - PyTorch's parameter name
    """Deprecated name of :func:`treespec_loads`."""
    warnings.warn(
        "`str_to_pytree` is deprecated. Please use `treespec_loads` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return treespec_loads(json)
