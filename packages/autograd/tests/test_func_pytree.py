"""flambeau.func flattens with the core's flambeau.utils._pytree: one registry, one TreeSpec.

A type registered with register_pytree_node is a container for vmap, grad, vjp and
jacrev, as in PyTorch (expected values derived by hand).
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import flambeau as F
import flambeau.func as ff
import flambeau.utils._pytree as pytree
from flambeau.func import _pytree as func_pytree


class Params:
    """A container of two tensors, registered as a pytree node."""

    def __init__(self, w, b):
        self.w, self.b = w, b


@pytest.fixture
def params_node():
    pytree.register_pytree_node(
        Params,
        lambda p: ([p.w, p.b], None),
        lambda children, _: Params(*children),
        flatten_with_keys_fn=lambda p: (
            [(pytree.GetAttrKey("w"), p.w), (pytree.GetAttrKey("b"), p.b)],
            None,
        ),
    )
    yield Params
    pytree._deregister_pytree_node(Params)


def test_func_uses_the_core_pytree():
    assert func_pytree.TreeSpec is pytree.TreeSpec
    assert func_pytree.tree_flatten is pytree.tree_flatten
    assert func_pytree.LEAF is pytree.treespec_leaf()


def test_vmap_over_a_registered_type(params_node):
    w = F.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])  # a batch of 3 weight rows
    b = F.tensor([10.0, 20.0, 30.0])
    x = F.tensor([1.0, 1.0])

    def affine(p, x):
        return Params(p.w * x, (p.w * x).sum() + p.b)

    out = ff.vmap(affine, in_dims=(0, None))(Params(w, b), x)
    assert isinstance(out, Params)
    assert out.w.tolist() == w.tolist()
    assert out.b.tolist() == [13.0, 27.0, 41.0]
    # in_dims given per field of the registered type
    out = ff.vmap(lambda p: p.w.sum() * p.b, in_dims=(Params(0, None),))(Params(w, F.tensor(2.0)))
    assert out.tolist() == [6.0, 14.0, 22.0]
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        ff.vmap(lambda p: p.w, in_dims=((0, 0),))(Params(w, b))


def test_grad_and_jacrev_of_a_registered_type(params_node):
    p = Params(F.tensor([1.0, 2.0]), F.tensor(3.0))
    x = F.tensor([4.0, 5.0])

    def loss(p):
        return ((p.w * x).sum() + p.b) ** 2  # (14 + 3)^2

    g = ff.grad(loss)(p)
    assert isinstance(g, Params)
    assert g.w.tolist() == [2 * 17 * 4.0, 2 * 17 * 5.0] and g.b.item() == 34.0
    jac = ff.jacrev(lambda p: p.w * p.b)(p)
    assert isinstance(jac, Params)
    assert jac.w.tolist() == [[3.0, 0.0], [0.0, 3.0]] and jac.b.tolist() == [1.0, 2.0]


def test_vjp_cotangent_structure_message_is_pytorchs():
    x = F.ones(2)
    _, vjp_fn = ff.vjp(lambda x: {"a": x, "b": (x, x)}, x)
    with pytest.raises(RuntimeError) as info:
        vjp_fn({"a": x, "b": x})
    assert str(info.value).endswith(
        "cotangents: {'a': *, 'b': *}, primal output: {'a': *, 'b': (*, *)}"
    )
    # the dict types stand in for each other, matched by key
    (g,) = vjp_fn(OrderedDict(b=(x, x), a=x))
    assert g.tolist() == [3.0, 3.0]


def test_vmap_namedtuple_and_return_types():
    P = namedtuple("P", "a b")
    x = F.from_numpy(np.arange(6.0).reshape(3, 2))
    out = ff.vmap(lambda p: P(p.a * p.b, p.a.sum()), in_dims=(P(0, None),))(P(x, 2))
    assert type(out) is P and out.a.tolist() == (2 * x).tolist()
    assert out.b.tolist() == [1.0, 5.0, 9.0]
    res = ff.vmap(lambda r: F.max(r, 0))(x)
    assert type(res) is type(F.max(x, 1))
    assert res.values.tolist() == [1.0, 3.0, 5.0] and res.indices.tolist() == [1, 1, 1]


def test_helpers_over_the_shared_spec():
    spec = pytree.tree_structure(({"a": 1, "b": 2}, [3]))
    assert func_pytree.flatten_up_to(spec, ({"b": "B", "a": "A"}, ["C"])) == ["A", "B", "C"]
    assert func_pytree.flatten_up_to(spec, ({"a": 1}, [3])) is None
    assert func_pytree.broadcast_prefix(({"b": 1, "a": 0}, None), spec) == [0, 1, None]
    assert func_pytree.broadcast_prefix(0, spec) == [0, 0, 0]
    assert func_pytree.broadcast_prefix((0,), spec) is None
    assert func_pytree.broadcast_prefix(([0, 1], None), spec) is None
