"""nn.common_types: PyTorch's type aliases of layer arguments."""

from __future__ import annotations

import typing

import pytest

import flambeau
from flambeau.nn import common_types as ct


@pytest.mark.parametrize(
    ("alias", "args"),
    [
        (ct._size_1_t, (int, tuple[int])),
        (ct._size_2_t, (int, tuple[int, int])),
        (ct._size_3_t, (int, tuple[int, int, int])),
        (ct._size_6_t, (int, tuple[int, int, int, int, int, int])),
        (ct._size_any_t, (int, tuple[int, ...])),
        (ct._ratio_2_t, (float, tuple[float, float])),
        (ct._ratio_any_t, (float, tuple[float, ...])),
        (ct._tensor_list_t, (flambeau.Tensor, tuple[flambeau.Tensor, ...])),
        (ct._maybe_indices_t, (flambeau.Tensor, tuple[flambeau.Tensor, flambeau.Tensor])),
        (ct._size_2_opt_t, (int, type(None), tuple[int | None, int | None])),
    ],
)
def test_aliases_are_a_scalar_or_a_tuple(alias, args):
    assert typing.get_args(alias) == args


def test_generic_alias_takes_a_type():
    assert typing.get_args(ct._scalar_or_tuple_4_t[str]) == (str, tuple[str, str, str, str])
    assert isinstance(ct.T, typing.TypeVar)


def test_reachable_from_nn():
    assert flambeau.nn.common_types is ct
