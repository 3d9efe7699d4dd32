"""flambeau.utils._pytree: PyTorch's torch.utils._pytree (flatten, rebuild, map, key
paths, registration, JSON specs).

Expected values are derived by hand from PyTorch's documented behaviour (and its
source's formats: TreeSpec's repr, keystr, the protocol-1 JSON). The last test runs one
program under torch and under flambeau and compares what they print.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import os
import pickle
import time
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import flambeau
import flambeau.utils._pytree as pytree
from flambeau.utils._pytree import (
    GetAttrKey,
    LeafSpec,
    MappingKey,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from flambeau_testing.ported import assert_ports_unchanged

Point = namedtuple("Point", ["x", "y"])


class Color(enum.Enum):
    RED = 1


class Pair:
    """A custom node, registered by the `registered` fixture."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __eq__(self, other):
        return type(other) is Pair and (self.first, self.second) == (other.first, other.second)

    def __repr__(self):
        return f"Pair({self.first!r}, {self.second!r})"


def _pair_flatten(p):
    return [p.first, p.second], None


def _pair_unflatten(children, context):
    return Pair(*children)


def _pair_flatten_with_keys(p):
    return [(GetAttrKey("first"), p.first), (GetAttrKey("second"), p.second)], None


@pytest.fixture
def registered():
    pytree.register_pytree_node(
        Pair,
        _pair_flatten,
        _pair_unflatten,
        serialized_type_name="test_pytree.Pair",
        flatten_with_keys_fn=_pair_flatten_with_keys,
    )
    yield Pair
    pytree._deregister_pytree_node(Pair)


# --------------------------------------------------------------------------- the module


def test_reachable_as_torch_utils_pytree():
    import flambeau.utils

    assert flambeau.utils._pytree is pytree
    torch = flambeau
    assert torch.utils._pytree.tree_leaves([1, [2]]) == [1, 2]
    assert {tuple, list, dict, OrderedDict, defaultdict, deque, namedtuple} <= set(
        pytree.SUPPORTED_NODES
    )
    for name in pytree.__all__:
        assert hasattr(pytree, name), name


# --------------------------------------------------------------------------- built-in nodes


def test_flatten_builtin_containers_in_order():
    tree = {"b": [1, (2, 3)], "a": Point(4, 5), "c": OrderedDict([("z", 6), ("y", 7)])}
    leaves, spec = tree_flatten(tree)
    # a dict keeps its insertion order (no sorting), as PyTorch's Python pytree
    assert leaves == [1, 2, 3, 4, 5, 6, 7]
    assert spec.type is dict and spec.context == ["b", "a", "c"]
    assert spec.child(1).type is namedtuple and spec.child(1).context is Point
    assert spec.child(2).type is OrderedDict and spec.child(2).context == ["z", "y"]
    rebuilt = tree_unflatten(leaves, spec)
    assert rebuilt == tree and list(rebuilt) == ["b", "a", "c"]
    assert type(rebuilt["a"]) is Point and type(rebuilt["c"]) is OrderedDict


def test_none_is_a_leaf():
    assert tree_leaves([None, (None,), {"k": None}]) == [None, None, None]
    assert pytree.tree_is_leaf(None)
    assert tree_structure(None).is_leaf()
    assert tree_map(lambda x: x is None, {"x": 7, "z": None}) == {"x": False, "z": True}


def test_defaultdict_and_deque_keep_factory_and_maxlen():
    d = defaultdict(list, {"a": 1, "b": 2})
    leaves, spec = tree_flatten(d)
    assert leaves == [1, 2] and spec.context == [list, ["a", "b"]]
    back = tree_unflatten([10, 20], spec)
    assert type(back) is defaultdict and back.default_factory is list
    assert back == {"a": 10, "b": 20}

    q = deque([1, 2, 3], maxlen=5)
    leaves, spec = tree_flatten(q)
    assert leaves == [1, 2, 3] and spec.type is deque and spec.context == 5
    back = tree_unflatten("abc", spec)
    assert back == deque(["a", "b", "c"]) and back.maxlen == 5


def test_empty_containers_are_nodes_without_leaves():
    for empty in ((), [], {}, OrderedDict(), deque()):
        leaves, spec = tree_flatten(empty)
        assert leaves == []
        assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (0, 1, 0)
        assert not spec.is_leaf()
        assert tree_unflatten([], spec) == empty
    assert tree_leaves([(), [], {}]) == []


def test_leaf_values_and_subclasses_without_registration_are_leaves():
    class MyList(list):
        pass

    assert tree_leaves([MyList([1, 2]), "ab", b"c", 1.5]) == [MyList([1, 2]), "ab", b"c", 1.5]
    t = flambeau.ones(2)
    assert tree_leaves({"w": t})[0] is t


def test_flatten_list_returns_children_in_spec():
    tree = [1, [2, [3, [4]]]]
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert (spec.num_leaves, spec.num_nodes) == (4, 8)


def test_return_types_are_nodes_of_their_own_type():
    result = flambeau.max(flambeau.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    leaves, spec = tree_flatten(result)
    assert spec.type is type(result) and spec.context is None
    assert repr(spec) == "TreeSpec(max, None, [*,\n  *])"
    assert [keystr(p) for p, _ in pytree.tree_leaves_with_path(result)] == ["[0]", "[1]"]
    back = tree_unflatten(leaves, spec)
    assert type(back) is type(result) and back.values is leaves[0]


# --------------------------------------------------------------------------- TreeSpec


def test_treespec_repr_is_pytorchs():
    assert repr(tree_structure(1)) == "*"
    assert repr(tree_structure((1, [2, 3]))) == (
        "TreeSpec(tuple, None, [*,\n  TreeSpec(list, None, [*,\n    *])])"
    )
    assert repr(tree_structure({"a": 1, "b": (2,)})) == (
        "TreeSpec(dict, ['a', 'b'], [*,\n  TreeSpec(tuple, None, [*])])"
    )
    assert repr(tree_structure([])) == "TreeSpec(list, None, [])"
    assert repr(tree_structure(Point(1, 2))) == (f"TreeSpec(namedtuple, {Point}, [*,\n  *])")
    assert repr(tree_structure(defaultdict(int, a=1))) == (
        "TreeSpec(defaultdict, [<class 'int'>, ['a']], [*])"
    )
    assert repr(tree_structure([[1, 2], [3]])) == (
        "TreeSpec(list, None, [TreeSpec(list, None, [*,\n    *]),\n  TreeSpec(list, None, [*])])"
    )


def test_treespec_counts_children_and_context():
    spec = tree_structure((1, [2, 3], {"k": 4}))
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (4, 7, 3)
    assert spec.type is tuple and spec.context is None
    kids = spec.children()
    assert [k.type for k in kids] == [None, list, dict]
    kids.append("x")  # a copy
    assert spec.num_children == 3
    assert spec.child(2).context == ["k"]
    with pytest.warns(FutureWarning, match="children_specs"):
        assert len(spec.children_specs) == 3
    leaf = spec.child(0)
    assert leaf.is_leaf() and isinstance(leaf, LeafSpec)
    assert (leaf.num_leaves, leaf.num_nodes, leaf.num_children) == (1, 1, 0)
    assert leaf is pytree.treespec_leaf()


def test_treespec_equality_and_hash():
    a = tree_structure({"a": 1, "b": [2, 3]})
    b = tree_structure({"a": "x", "b": ["y", "z"]})
    assert a == b and hash(a) == hash(b)
    assert a != tree_structure({"b": [1, 2], "a": 3})  # key order is part of the structure
    assert a != tree_structure({"a": 1, "b": (2, 3)})
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert len({a, b, tree_structure([1])}) == 2
    assert (a == 3) is False


def test_treespec_is_immutable_and_copies():
    spec = tree_structure((1, {"a": [2]}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.num_leaves = 5
    assert copy.deepcopy(spec) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(tree_structure(0))).is_leaf()


def test_leafspec_construction_is_deprecated():
    with pytest.warns(FutureWarning, match="LeafSpec"):
        leaf = LeafSpec()
    assert leaf.is_leaf() and repr(leaf) == "*"


def test_treespec_unflatten_checks_the_number_of_leaves():
    spec = tree_structure((1, [2, 3]))
    assert spec.unflatten(iter([7, 8, 9])) == (7, [8, 9])
    with pytest.raises(ValueError) as info:
        spec.unflatten([1, 2])
    assert str(info.value) == (
        "treespec.unflatten(leaves): `leaves` has length 2 but the spec refers to a pytree "
        f"that holds 3 items ({spec})."
    )
    with pytest.raises(ValueError, match="has length 4"):
        tree_unflatten([1, 2, 3, 4], spec)


def test_tree_unflatten_takes_swapped_arguments_and_checks_the_spec():
    spec = tree_structure([1, 2])
    assert tree_unflatten(spec, [5, 6]) == [5, 6]
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        tree_unflatten([1], [2])


def test_treespec_builders():
    leaf = pytree.treespec_leaf()
    spec = pytree.treespec_tuple([leaf, pytree.treespec_dict(a=leaf, b=leaf)])
    assert spec == tree_structure((0, {"a": 0, "b": 0}))
    with pytest.raises(ValueError, match="Expected a tuple of TreeSpec values"):
        pytree.treespec_tuple([1])
    with pytest.raises(ValueError, match="Expected a dictionary of TreeSpec values"):
        pytree.treespec_dict({"a": 1})


def test_flatten_up_to_takes_subtrees_and_names_mismatches():
    spec = tree_structure((1, {"a": 2, "b": 3}))
    assert spec.flatten_up_to(([1, 2], {"b": "B", "a": (3,)})) == [[1, 2], (3,), "B"]
    # the standard dict types stand in for each other, matched by key
    assert spec.flatten_up_to((0, OrderedDict(b=1, a=2))) == [0, 2, 1]
    with pytest.raises(ValueError, match=r"Node type mismatch; expected <class 'tuple'>"):
        spec.flatten_up_to([1, {"a": 2, "b": 3}])
    with pytest.raises(ValueError, match="Node arity mismatch; expected 2, but got 3"):
        spec.flatten_up_to((1, 2, 3))
    with pytest.raises(ValueError, match=r"Node keys mismatch; missing key\(s\): \{'b'\}"):
        spec.flatten_up_to((1, {"a": 2, "c": 3}))
    with pytest.raises(ValueError, match="Node context mismatch for node type"):
        tree_structure(Point(1, 2)).flatten_up_to(namedtuple("Other", "x y")(1, 2))
    # a deque's maxlen may differ
    assert tree_structure(deque([1], maxlen=3)).flatten_up_to(deque([5])) == [5]


# --------------------------------------------------------------------------- map and friends


def test_tree_map_with_several_trees_takes_the_first_as_prefix():
    assert tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    assert tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, {"b": 20, "a": 10}) == {
        "a": 11,
        "b": 22,
    }
    with pytest.raises(ValueError, match="Node arity mismatch"):
        tree_map(lambda x, y: x, [1, 2], [1])


def test_tree_map_inplace_returns_the_tree():
    seen = []
    tree = {"a": [1, 2], "b": 3}
    rest = {"a": ["a", "b"], "b": "c"}
    assert pytree.tree_map_(lambda x, y: seen.append((x, y)), tree, rest) is tree
    assert seen == [(1, "a"), (2, "b"), (3, "c")]


def test_map_only_and_tree_map_only():
    tree = [1, "a", (2.5, True), None]
    assert pytree.tree_map_only(int, lambda x: -x, tree) == [-1, "a", (2.5, -1), None]
    assert pytree.tree_map_only((int, float), str, tree) == ["1", "a", ("2.5", "True"), None]
    assert pytree.tree_map_only(str | None, lambda x: "S", tree) == [1, "S", (2.5, True), "S"]
    assert pytree.tree_map_only(lambda x: x == 1, lambda x: 100, [1, 2]) == [100, 2]
    with pytest.raises(TypeError, match="Argument must be a type, a tuple of types, or a callable"):
        pytree.map_only(3)
    seen = []
    pytree.tree_map_only_(str, seen.append, tree)
    assert seen == ["a"]

    @pytree.map_only(int)
    def twice(x):
        """Doubles."""
        return 2 * x

    assert (twice(2), twice("s"), twice.__doc__) == (4, "s", "Doubles.")


def test_tree_all_any():
    assert pytree.tree_all(lambda x: x > 0, [1, (2, {"k": 3})])
    assert not pytree.tree_all(lambda x: x > 1, [1, 2])
    assert pytree.tree_all(lambda x: False, [])
    assert not pytree.tree_any(lambda x: True, ((), []))
    assert pytree.tree_any(lambda x: x is None, {"a": 1, "b": None})
    assert pytree.tree_all_only(int, lambda x: x > 0, [1, "a", -2.0])
    assert not pytree.tree_all_only(int, lambda x: x > 0, [1, "a", -2])
    assert pytree.tree_any_only(str, lambda s: s == "a", [1, "a"])
    assert not pytree.tree_any_only(float, lambda x: True, [1, "a"])


def test_is_leaf_callbacks_stop_descent():
    def tuples(x):
        return isinstance(x, tuple)

    tree = [(1, 2), [3, (4,)]]
    leaves, spec = tree_flatten(tree, is_leaf=tuples)
    assert leaves == [(1, 2), 3, (4,)]
    assert tree_unflatten(leaves, spec) == tree
    assert tree_leaves(tree, tuples) == [(1, 2), 3, (4,)]
    assert list(pytree.tree_iter(tree, is_leaf=tuples)) == [(1, 2), 3, (4,)]
    assert tree_structure(tree, is_leaf=tuples).num_leaves == 3
    assert tree_map(lambda x: x if isinstance(x, int) else len(x), tree, is_leaf=tuples) == [
        2,
        [3, 1],
    ]
    assert pytree.tree_all(lambda x: isinstance(x, (tuple, int)), tree, is_leaf=tuples)
    assert pytree.tree_is_leaf((1,), is_leaf=tuples) and not pytree.tree_is_leaf((1,))
    paths = [keystr(p) for p, _ in pytree.tree_leaves_with_path(tree, is_leaf=tuples)]
    assert paths == ["[0]", "[1][0]", "[1][1]"]


def test_arg_tree_leaves():
    assert pytree.arg_tree_leaves(1, [2, (3,)], k={"a": 4}) == [1, 2, 3, 4]


def test_broadcast_to_and_flatten():
    spec = tree_structure((1, [2, 3], {"a": 4}))
    assert pytree._broadcast_to_and_flatten(0, spec) == [0, 0, 0, 0]
    assert pytree._broadcast_to_and_flatten((0, 1, None), spec) == [0, 1, 1, None]
    assert pytree._broadcast_to_and_flatten((0, 1), spec) is None


# --------------------------------------------------------------------------- key paths


def test_key_entries():
    assert (str(SequenceKey(2)), SequenceKey(2).get("abc")) == ("[2]", "c")
    assert (str(MappingKey("w")), MappingKey("w").get({"w": 1})) == ("['w']", 1)
    assert (str(MappingKey(3)), str(GetAttrKey("x"))) == ("[3]", ".x")
    assert GetAttrKey("y").get(Point(1, 2)) == 2
    assert SequenceKey(1) == SequenceKey(1) and hash(MappingKey("a")) == hash(MappingKey("a"))
    assert repr(SequenceKey(0)) == "SequenceKey(idx=0)"
    assert repr(MappingKey("k")) == "MappingKey(key='k')"
    assert repr(GetAttrKey("n")) == "GetAttrKey(name='n')"


def test_flatten_with_path_for_every_builtin_node():
    tree = {
        "t": (1, [2]),
        "p": Point(3, 4),
        "o": OrderedDict(k=5),
        "d": defaultdict(int, {0: 6}),
        "q": deque([7]),
    }
    pairs, spec = pytree.tree_flatten_with_path(tree)
    assert spec == tree_structure(tree)
    assert [(keystr(p), v) for p, v in pairs] == [
        ("['t'][0]", 1),
        ("['t'][1][0]", 2),
        ("['p'].x", 3),
        ("['p'].y", 4),
        ("['o']['k']", 5),
        ("['d'][0]", 6),
        ("['q'][0]", 7),
    ]
    for path, value in pairs:
        assert pytree.key_get(tree, path) == value
    assert pytree.tree_leaves_with_path(tree) == pairs


def test_tree_map_with_path():
    out = pytree.tree_map_with_path(
        lambda p, x, y: f"{keystr(p)}:{x}{y}", {"a": [1, 2]}, {"a": ["x", "y"]}
    )
    assert out == {"a": ["['a'][0]:1x", "['a'][1]:2y"]}
    assert pytree.tree_map_with_path(lambda p, x: x, ()) == ()


# --------------------------------------------------------------------------- registration


def test_register_pytree_node_makes_a_container(registered):
    tree = [Pair(1, (2, 3)), 4]
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert repr(spec) == (
        "TreeSpec(list, None, [TreeSpec(Pair, None, [*,\n"
        "    TreeSpec(tuple, None, [*,\n      *])]),\n  *])"
    )
    assert tree_unflatten([10, 20, 30, 40], spec) == [Pair(10, (20, 30)), 40]
    assert tree_map(str, Pair(1, 2)) == Pair("1", "2")
    assert [keystr(p) for p, _ in pytree.tree_leaves_with_path(tree)] == [
        "[0].first",
        "[0].second[0]",
        "[0].second[1]",
        "[1]",
    ]
    assert not pytree.tree_is_leaf(Pair(1, 2))


def test_registering_twice_is_a_value_error(registered):
    with pytest.raises(ValueError) as info:
        pytree.register_pytree_node(Pair, _pair_flatten, _pair_unflatten)
    assert str(info.value) == f"{Pair} is already registered as pytree node."


def test_old_register_name_warns_and_overwrites():
    class Box:
        def __init__(self, v):
            self.v = v

    with pytest.warns(FutureWarning, match="_register_pytree_node` is deprecated"):
        pytree._register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(*c))
    try:
        assert tree_leaves(Box(3)) == [3]
        with pytest.warns(UserWarning, match="Overwriting the previous registration"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                pytree._register_pytree_node(Box, lambda b: ([], b.v), lambda c, v: Box(v))
        assert tree_leaves(Box(3)) == []
    finally:
        pytree._deregister_pytree_node(Box)
    assert tree_leaves(Box(3))[0].v == 3  # a leaf again


def test_dumpable_context_functions_come_in_pairs():
    class Half:
        pass

    with pytest.raises(ValueError, match="Both to_dumpable_context and from_dumpable_context"):
        pytree.register_pytree_node(
            Half, lambda h: ([], None), lambda c, x: Half(), to_dumpable_context=str
        )
    pytree._deregister_pytree_node(Half)


def test_custom_node_without_keys_cannot_give_paths():
    class Bag:
        def __init__(self, items):
            self.items = items

    pytree.register_pytree_node(Bag, lambda b: (list(b.items), None), lambda c, _: Bag(c))
    try:
        assert tree_leaves(Bag([1, 2])) == [1, 2]
        with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn for type"):
            pytree.tree_flatten_with_path(Bag([1]))
    finally:
        pytree._deregister_pytree_node(Bag)


def test_custom_node_flatten_up_to_matches_type_arity_and_context(registered):
    spec = tree_structure(Pair(1, 2))
    assert spec.flatten_up_to(Pair([1], 2)) == [[1], 2]
    with pytest.raises(ValueError, match="Type mismatch; expected"):
        spec.flatten_up_to((1, 2))


def test_register_dataclass_keeps_none_fields_in_the_context():
    @dataclasses.dataclass
    class Batch:
        x: object
        mask: object = None
        label: object = None

    pytree.register_dataclass(Batch)
    try:
        leaves, spec = tree_flatten(Batch(1, None, 3))
        assert leaves == [1, 3] and spec.context == [["x", "label"], ["mask"]]
        assert tree_unflatten([5, 6], spec) == Batch(5, None, 6)
        assert [keystr(p) for p, _ in pytree.tree_leaves_with_path(Batch(1, 2))] == [
            ".x",
            ".mask",
        ]
    finally:
        pytree._deregister_pytree_node(Batch)


def test_register_dataclass_checks_field_names():
    @dataclasses.dataclass
    class D:
        a: int
        b: int

    with pytest.raises(ValueError, match="Missing fields in `field_names`: {'b'}"):
        pytree.register_dataclass(D, field_names=["a"])
    with pytest.raises(ValueError, match="Unexpected fields in `field_names`: {'c'}"):
        pytree.register_dataclass(D, field_names=["a", "b", "c"])

    class Plain:
        def __init__(self, a):
            self.a = a

    with pytest.raises(ValueError, match="field_names must be specified"):
        pytree.register_dataclass(Plain)
    pytree.register_dataclass(D, field_names=["a"], drop_field_names=["b"])
    try:
        assert tree_leaves(D(1, 2)) == [1]
    finally:
        pytree._deregister_pytree_node(D)


def test_register_constant():
    @dataclasses.dataclass(frozen=True)
    class Norm:
        kind: str

    pytree.register_constant(Norm)
    try:
        assert pytree.is_constant_class(Norm) and not pytree.is_constant_class(Pair)
        leaves, spec = tree_flatten([Norm("l2"), 1])
        assert leaves == [1]
        assert tree_unflatten([2], spec) == [Norm("l2"), 2]
        assert spec.child(0).context == pytree.ConstantNode(Norm("l2"))
        assert spec == tree_structure([Norm("l2"), 5])
        assert spec != tree_structure([Norm("l1"), 5])
        assert hash(spec) == hash(tree_structure([Norm("l2"), 5]))
        assert pytree._retrieve_constant(spec.child(0)) == Norm("l2")
    finally:
        pytree._deregister_pytree_node(Norm)
    assert not pytree.is_constant_class(Norm)

    class NoEq:
        pass

    with pytest.raises(TypeError, match="non-default `__eq__`"):
        pytree.register_constant(NoEq)

    class NoHash:
        def __eq__(self, other):
            return True

    with pytest.raises(TypeError, match="non-default `__hash__`"):
        pytree.register_constant(NoHash)


# --------------------------------------------------------------------------- JSON


def test_treespec_dumps_writes_pytorchs_json():
    text = pytree.treespec_dumps(tree_structure((1, {"a": 2})))
    assert json.loads(text) == [
        1,
        {
            "type": "builtins.tuple",
            "context": "null",
            "children_spec": [
                {"type": None, "context": None, "children_spec": []},
                {
                    "type": "builtins.dict",
                    "context": '["a"]',
                    "children_spec": [{"type": None, "context": None, "children_spec": []}],
                },
            ],
        },
    ]
    assert text.startswith('[1, {"type": "builtins.tuple", "context": "null", "children_spec": [')


@pytest.mark.parametrize(
    "tree",
    [
        0,
        (1, [2, 3]),
        {"b": 1, "a": (2,)},
        OrderedDict(z=1, y=2),
        defaultdict(list, {"k": 1}),
        deque([1, 2], maxlen=4),
        [(), [], {}],
        {1: "int key"},
    ],
    ids=repr,
)
def test_treespec_dumps_loads_round_trip(tree):
    spec = tree_structure(tree)
    back = pytree.treespec_loads(pytree.treespec_dumps(spec))
    assert back == spec
    assert tree_unflatten(tree_leaves(tree), back) == tree


def test_dumps_needs_a_serialized_name():
    with pytest.raises(NotImplementedError, match="Can't serialize TreeSpec of namedtuple class"):
        pytree.treespec_dumps(tree_structure(Point(1, 2)))

    Named = namedtuple("Named", "a b")
    pytree._register_namedtuple(Named, serialized_type_name="test_pytree.Named")
    try:
        spec = tree_structure([Named(1, 2)])
        text = pytree.treespec_dumps(spec)
        assert '"context": "test_pytree.Named"' in text
        assert pytree.treespec_loads(text) == spec
    finally:
        pytree._deregister_pytree_node(Named)

    class Anonymous:
        pass

    pytree.register_pytree_node(Anonymous, lambda a: ([], None), lambda c, _: Anonymous())
    try:
        with pytest.raises(NotImplementedError, match="No registered serialization name for"):
            pytree.treespec_dumps(tree_structure(Anonymous()))
    finally:
        pytree._deregister_pytree_node(Anonymous)


def test_dumps_custom_node_context_and_enums(registered):
    spec = tree_structure([Pair(1, 2)])
    assert pytree.treespec_loads(pytree.treespec_dumps(spec)) == spec

    class Tagged:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

    pytree.register_pytree_node(
        Tagged,
        lambda t: ([t.v], t.tag),
        lambda c, tag: Tagged(c[0], tag),
        serialized_type_name="test_pytree.Tagged",
    )
    try:
        spec = tree_structure(Tagged(1, Color.RED))
        text = pytree.treespec_dumps(spec)
        assert '\\"__enum__\\": true' in text
        assert pytree.treespec_loads(text).context is Color.RED
        with pytest.raises(TypeError, match="Unable to serialize context"):
            pytree.treespec_dumps(tree_structure(Tagged(1, object())))
    finally:
        pytree._deregister_pytree_node(Tagged)


def test_json_errors():
    with pytest.raises(ValueError, match=r"Unknown protocol 2. Available protocols: \[1\]"):
        pytree.treespec_dumps(tree_structure([1]), protocol=2)
    with pytest.raises(ValueError, match="Unknown protocol 7"):
        pytree.treespec_loads('[7, {"type": null, "context": null, "children_spec": []}]')
    with pytest.raises(NotImplementedError, match="Deserializing nosuch.Type in pytree"):
        pytree.treespec_loads(
            '[1, {"type": "nosuch.Type", "context": "null", "children_spec": []}]'
        )
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        pytree.treespec_dumps([1])


def test_treespec_pprint():
    tree = {"a": (1, [2, 3]), "b": Point(4, 5), "c": (6,)}
    assert pytree.treespec_pprint(tree_structure(tree)) == (
        "{'a': (*, [*, *]), 'b': Point(x=*, y=*), 'c': (*,)}"
    )
    assert pytree.treespec_pprint(tree_structure(0)) == "*"


# --------------------------------------------------------------------------- type checks


def test_namedtuple_and_structseq_checks():
    class Sub(Point):
        pass

    assert pytree.is_namedtuple(Point) and pytree.is_namedtuple(Point(1, 2))
    assert pytree.is_namedtuple_class(Sub) and pytree.is_namedtuple_instance(Sub(1, 2))
    assert not pytree.is_namedtuple((1, 2)) and not pytree.is_namedtuple_class(tuple)
    assert not pytree.is_namedtuple_instance(Point)
    assert tree_structure(Sub(1, 2)).context is Sub  # subclasses of namedtuples too
    st = time.gmtime(0)
    assert pytree.is_structseq(st) and pytree.is_structseq(type(st))
    assert pytree.is_structseq_class(os.stat_result)
    assert pytree.is_structseq_instance(st) and not pytree.is_structseq_instance(type(st))
    assert not pytree.is_structseq(Point(1, 2)) and not pytree.is_structseq_class(tuple)
    assert tree_leaves(st) == [st]  # struct sequences are leaves unless registered


def test_deprecated_private_helpers_warn():
    with pytest.warns(FutureWarning):
        assert pytree._is_leaf(1)
    with pytest.warns(FutureWarning):
        assert pytree._is_namedtuple_instance(Point(1, 2))


# --------------------------------------------------------------------------- against torch

_PORTED_PROGRAM = """
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
import {module} as torch
import {module}.utils._pytree as pytree

P = namedtuple("P", "x y")

class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b
    def __repr__(self):
        return f"Pair({{self.a!r}}, {{self.b!r}})"

pytree.register_pytree_node(
    Pair, lambda p: ([p.a, p.b], "ctx"), lambda c, ctx: Pair(*c),
    serialized_type_name="t.Pair",
    flatten_with_keys_fn=lambda p: (
        [(pytree.GetAttrKey("a"), p.a), (pytree.MappingKey("b"), p.b)], "ctx"
    ),
)
try:
    pytree.register_pytree_node(Pair, None, None)
except ValueError as e:
    print("twice:", type(e).__name__, e)

trees = [
    1, None, (), [], {{}}, (1,), [1, [2, [3]]], {{"b": 1, "a": 2}},
    {{"x": (1, None), "y": [P(2, 3), OrderedDict(z=4, w=5)]}},
    defaultdict(list, {{"k": [1, 2]}}), deque([1, 2], maxlen=3),
    [Pair(1, (2, 3)), {{3: "three", "s": (4,)}}], P((), [None]),
]
for tree in trees:
    leaves, spec = pytree.tree_flatten(tree)
    print(leaves)
    print(repr(spec))
    print(spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf())
    print(pytree.treespec_pprint(spec))
    print([(pytree.keystr(p), v) for p, v in pytree.tree_leaves_with_path(tree)])
    print(pytree.tree_map(lambda v: v if v is None else str(v), tree))
    back = pytree.tree_unflatten(leaves, spec)
    print(back == tree or repr(back) == repr(tree))
    try:
        print(pytree.treespec_dumps(spec))
    except Exception as e:
        print("dumps:", type(e).__name__)
print(pytree.tree_flatten([(1, 2), [3]], is_leaf=lambda x: isinstance(x, tuple))[0])
spec = pytree.tree_structure((1, {{"a": 2, "b": 3}}))
others = [[1, {{"a": 2, "b": 3}}], (1, 2, 3), (1, {{"a": 2, "c": 3}})]
for other in others + [(1, OrderedDict(b=0, a=1))]:
    try:
        print(spec.flatten_up_to(other))
    except ValueError as e:
        print("ValueError:", e)
try:
    spec.unflatten([1])
except ValueError as e:
    print("ValueError:", e)
print(pytree.tree_map(lambda x, y: (x, y), [1, {{"k": 2}}], [[9], {{"k": (8,)}}]))
print(pytree.tree_all(bool, []), pytree.tree_any(bool, []))
print(pytree.tree_map_only(int, lambda x: -x, [1, "a", 2.0, True]))
"""


def test_a_program_ports_with_the_same_output_as_torch():
    pytest.importorskip("torch")
    assert_ports_unchanged(_PORTED_PROGRAM, timeout=120)
