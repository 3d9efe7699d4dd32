"""Inference mode and inference tensors, as PyTorch's "Inference Mode" note describes:
tensors made in the mode are inference tensors, which outside it cannot be updated in
place, require grad or be saved for backward; everything else works on them."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flambeau as F


def test_tensors_made_inside_are_inference_tensors():
    normal = F.ones(3)
    with F.inference_mode():
        x = F.ones(3)
        y = normal * 2  # a new result: an inference tensor
        v = normal[1:]  # a view of a normal tensor stays normal
        assert F.is_inference_mode_enabled() and not F.is_grad_enabled()
    assert x.is_inference() and y.is_inference() and F.is_inference(x)
    assert not normal.is_inference() and not v.is_inference()
    assert x[:2].is_inference() and x.view(3, 1).is_inference()  # views of inference tensors
    assert not x.clone().is_inference()  # a clone made outside is a normal tensor
    assert not F.is_inference_mode_enabled() and F.is_grad_enabled()


def test_inplace_update_outside_the_mode_raises():
    with F.inference_mode():
        x = F.zeros(3)
        x.add_(1)  # inside: allowed
    with pytest.raises(
        RuntimeError, match="Inplace update to inference tensor outside InferenceMode"
    ):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x[0] = 5.0
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        F.add(F.ones(3), 1, out=x)
    np.testing.assert_array_equal(x.numpy(), [1.0, 1.0, 1.0])  # nothing written
    y = x + 1  # out-of-place use is fine and makes a normal tensor
    assert not y.is_inference() and y.tolist() == [2.0, 2.0, 2.0]
    with F.inference_mode():
        x.mul_(3)  # back inside: allowed again
    assert x.tolist() == [3.0, 3.0, 3.0]


def test_normal_tensors_update_in_place_inside_the_mode():
    a = F.ones(2)
    before = a._version
    with F.inference_mode():
        a.add_(1)
    assert a.tolist() == [2.0, 2.0] and a._version > before


def test_requires_grad_outside_the_mode_raises():
    with F.inference_mode():
        x = F.ones(2)
        w = F.ones(2, requires_grad=True)  # inside: allowed
    assert w.requires_grad and w.is_inference()
    with pytest.raises(RuntimeError, match="requires_grad=True on inference tensor"):
        x.requires_grad_()
    with pytest.raises(RuntimeError, match="requires_grad=True on inference tensor"):
        x.requires_grad = True
    x.requires_grad_(False)  # turning it off is allowed
    assert x.clone().requires_grad_().requires_grad


def test_saving_for_backward_outside_the_mode_raises():
    with F.inference_mode():
        x = F.tensor([1.0, 2.0])
    w = F.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * w  # mul saves both inputs
    (x + w).sum().backward()  # add saves neither: allowed, as in PyTorch
    assert w.grad.tolist() == [1.0, 1.0]
    y = x.clone() * w  # the documented workaround
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 3.0]


def test_custom_function_cannot_save_an_inference_tensor():
    class Scale(F.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    with F.inference_mode():
        x = F.ones(2)
    w = F.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        Scale.apply(x, w)


def test_mode_false_inside_turns_it_off():
    with F.inference_mode():
        with F.inference_mode(False):
            z = F.ones(1)
            assert not F.is_inference_mode_enabled() and F.is_grad_enabled()
        assert F.is_inference_mode_enabled()
    assert not z.is_inference()


def test_decorator_and_threads():
    @F.inference_mode()
    def make():
        return F.ones(2), F.is_inference_mode_enabled()

    t, enabled = make()
    assert enabled and t.is_inference() and not F.is_inference_mode_enabled()
    seen = []
    with F.inference_mode():
        th = threading.Thread(
            target=lambda: seen.append((F.ones(1).is_inference(), F.is_inference_mode_enabled()))
        )
        th.start()
        th.join()
    assert seen == [(False, False)]  # the mode is per thread


def test_modules_run_in_inference_mode():
    nn = pytest.importorskip("flambeau.nn")
    model = nn.Linear(3, 2)
    with F.inference_mode():
        out = model(F.ones(4, 3))
    assert out.is_inference() and not out.requires_grad
    assert not model.weight.is_inference()
    # Training afterwards still works: the parameters are normal tensors.
    model(F.ones(4, 3)).sum().backward()
    assert model.weight.grad.shape == (2, 3)
