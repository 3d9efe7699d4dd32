"""repr/str of tensors in PyTorch's format (expected strings derived by hand)."""

import math

import pytest

import flambeau

F = flambeau


@pytest.fixture(autouse=True)
def default_printoptions():
    flambeau.set_printoptions(profile="default")
    yield
    flambeau.set_printoptions(profile="default")


@pytest.mark.parametrize(
    "make,expected",
    [
        (lambda: F.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
        (lambda: F.tensor([1, 2], dtype=F.int32), "tensor([1, 2], dtype=flambeau.int32)"),
        (lambda: F.tensor([1, 2]), "tensor([1, 2])"),
        (lambda: F.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
        (lambda: F.tensor([0.1, -1.5]), "tensor([ 0.1000, -1.5000])"),
        (lambda: F.tensor([-1.0, 0.5]), "tensor([-1.0000,  0.5000])"),
        (lambda: F.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (lambda: F.tensor([1.0, 1e9]), "tensor([1.0000e+00, 1.0000e+09])"),
        (lambda: F.tensor([1.0, 2000.0]), "tensor([1.0000e+00, 2.0000e+03])"),
        (lambda: F.tensor([0.5, 400.0]), "tensor([  0.5000, 400.0000])"),
        (lambda: F.tensor([0.0, 10.0]), "tensor([ 0., 10.])"),
        (lambda: F.tensor([0.0, 0.0]), "tensor([0., 0.])"),
        (lambda: F.tensor([-3.0, 2.0]), "tensor([-3.,  2.])"),
        (lambda: F.tensor([math.nan, 1.5]), "tensor([   nan, 1.5000])"),
        (lambda: F.tensor([math.inf, 1.0]), "tensor([inf, 1.])"),
        (lambda: F.tensor([-math.inf, math.nan]), "tensor([-inf, nan])"),
        (lambda: F.tensor(True), "tensor(True)"),
        (lambda: F.tensor(3), "tensor(3)"),
        (lambda: F.tensor(2.5), "tensor(2.5000)"),
        (lambda: F.tensor(-7.0), "tensor(-7.)"),
        (lambda: F.tensor([True, False]), "tensor([ True, False])"),
        (lambda: F.tensor([1 + 2j, 3 - 4j]), "tensor([1.+2.j, 3.-4.j])"),
        (lambda: F.tensor([0.5 + 1j]), "tensor([0.5000+1.j])"),
        (lambda: F.tensor([1.5], dtype=F.float64), "tensor([1.5000], dtype=flambeau.float64)"),
        (lambda: F.tensor([1.5], dtype=F.float16), "tensor([1.5000], dtype=flambeau.float16)"),
        (lambda: F.tensor([1.5], dtype=F.bfloat16), "tensor([1.5000], dtype=flambeau.bfloat16)"),
        (lambda: F.tensor([1j], dtype=F.complex128), "tensor([0.+1.j], dtype=flambeau.complex128)"),
        (lambda: F.tensor([3], dtype=F.uint8), "tensor([3], dtype=flambeau.uint8)"),
        (lambda: F.tensor([]), "tensor([])"),
        (lambda: F.zeros(0, 3), "tensor([], size=(0, 3))"),
        (lambda: F.tensor([], dtype=F.int64), "tensor([], dtype=flambeau.int64)"),
        (lambda: F.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
        (
            lambda: F.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]),
            "tensor([[[1, 2],\n         [3, 4]],\n\n        [[5, 6],\n         [7, 8]]])",
        ),
    ],
)
def test_repr(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_line_wrapping():
    t = F.tensor(list(range(30)))
    assert repr(t) == (
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])"
    )


def test_suffix_moves_to_new_line_when_too_long():
    t = F.tensor(list(range(18)), dtype=F.int32)
    assert repr(t) == (
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17],\n"
        "       dtype=flambeau.int32)"
    )


def test_summarized_vector():
    t = F.tensor(list(range(2000)))
    assert repr(t) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


def test_summarized_matrix():
    t = F.tensor([[r * 100 + c for c in range(100)] for r in range(100)])
    assert repr(t) == (
        "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
        "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
        "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
        "        ...,\n"
        "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n"
        "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n"
        "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]])"
    )


def test_summary_formats_only_shown_values():
    # 1e6 sits in the hidden middle, so it does not force scientific notation.
    data = [1.5] * 2000
    data[1000] = 1e9
    assert repr(F.tensor(data)) == (
        "tensor([1.5000, 1.5000, 1.5000,  ..., 1.5000, 1.5000, 1.5000])"
    )


def test_set_printoptions_precision_and_sci_mode():
    F.set_printoptions(precision=2)
    assert repr(F.tensor([1.2345])) == "tensor([1.23])"
    F.set_printoptions(sci_mode=True)  # precision stays 2
    assert repr(F.tensor([1.5])) == "tensor([1.50e+00])"
    F.set_printoptions(profile="default", sci_mode=True)
    assert repr(F.tensor([1.5])) == "tensor([1.5000e+00])"
    # As in PyTorch 2.13, a sci_mode set with set_printoptions decides the notation before
    # the width is measured: forcing fixed point leaves no room for the scientific strings
    # ("1.0000e-05" would be 10 wide; "0.0000" is 6).
    F.set_printoptions(sci_mode=False)
    assert repr(F.tensor([1e-5, 1.0])) == "tensor([0.0000, 1.0000])"
    assert repr(F.tensor([0.25, 1.0])) == "tensor([0.2500, 1.0000])"
    assert repr(F.tensor([100.5, 1e-9, 3.0])) == "tensor([100.5000,   0.0000,   3.0000])"
    F.set_printoptions(sci_mode=True)
    assert repr(F.tensor([1.0, 2.0])) == "tensor([1.0000e+00, 2.0000e+00])"


def test_threshold_edgeitems_linewidth():
    F.set_printoptions(threshold=5, edgeitems=2)
    assert repr(F.tensor([1, 2, 3, 4, 5, 6])) == "tensor([1, 2,  ..., 5, 6])"
    F.set_printoptions(profile="default", linewidth=20)
    assert repr(F.tensor([1, 2, 3, 4, 5, 6])) == "tensor([1, 2, 3, 4,\n        5, 6])"


def test_profiles_and_get_printoptions():
    F.set_printoptions(profile="full")
    assert "..." not in repr(F.tensor(list(range(2000))))
    F.set_printoptions(profile="short")
    assert repr(F.tensor([1.2345])) == "tensor([1.23])"
    assert F.get_printoptions()["edgeitems"] == 2
    F.set_printoptions(profile="default")
    assert F.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    with pytest.raises(ValueError):
        F.set_printoptions(profile="huge")


def test_printoptions_context_manager():
    with F.printoptions(precision=1):
        assert repr(F.tensor([1.25])) == "tensor([1.2])"
    assert repr(F.tensor([1.25])) == "tensor([1.2500])"


def test_default_dtype_changes_the_suffix():
    old = F.get_default_dtype()
    try:
        F.set_default_dtype(F.float64)
        assert repr(F.tensor([1.5], dtype=F.float64)) == "tensor([1.5000])"
        assert repr(F.tensor([1.5], dtype=F.float32)) == "tensor([1.5000], dtype=flambeau.float32)"
    finally:
        F.set_default_dtype(old)


def test_strided_view_prints_its_values():
    import numpy as np

    a = np.arange(6.0).reshape(2, 3)
    assert repr(F.from_numpy(a.T)) == (
        "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]], dtype=flambeau.float64)"
    )


def test_format():
    assert f"{F.tensor(2.5):.1f}" == "2.5"
    assert format(F.tensor([1, 2])) == "tensor([1, 2])"
    with pytest.raises(TypeError):
        format(F.tensor([1, 2]), ".2f")
