"""Tensor.register_post_accumulate_grad_hook and Tensor.grad_dtype as backward uses them:
hooks run after a leaf's .grad is accumulated (not for autograd.grad), and gradients are
cast to a leaf's grad_dtype; PyTorch's errors."""

import subprocess
import sys

import numpy as np
import pytest

import flambeau as F
import flambeau.autograd as autograd


def test_post_accumulate_hook_sees_the_accumulated_grad():
    x = F.ones(2, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 3).sum().backward()
    (x * 2).sum().backward()
    assert [s.numpy().tolist() for s in seen] == [[3.0, 3.0], [5.0, 5.0]]
    handle.remove()
    (x * 2).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_hook_can_change_grad_in_place_and_runs_after_tensor_hooks():
    x = F.ones(2, requires_grad=True)
    order = []
    x.register_hook(lambda g: order.append("tensor") or g * 10)

    def clear(t):
        order.append("post")
        t.grad.zero_()

    x.register_post_accumulate_grad_hook(clear)
    (x * 3).sum().backward()
    assert order == ["tensor", "post"]
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_post_accumulate_hook_does_not_run_for_autograd_grad():
    x = F.ones(2, requires_grad=True)
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(1))
    autograd.grad((x * 3).sum(), x)
    assert calls == []


def test_post_accumulate_hook_errors():
    with pytest.raises(RuntimeError, match="tensor that doesn't require gradient"):
        F.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    y = F.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        y.register_post_accumulate_grad_hook(lambda t: None)
    x = F.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: F.zeros(2))
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        (x * 3).sum().backward()


def test_post_accumulate_hook_may_return_its_tensor():
    # PyTorch's own example returns p.add_(...), the tensor itself: that is ignored.
    v = F.tensor([0.0, 0.0, 0.0], requires_grad=True)
    lr = 0.01
    v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
    calls = []
    v.register_post_accumulate_grad_hook(lambda p: calls.append(1))  # later hooks still run
    v.backward(F.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(v.detach().numpy(), [-0.01, -0.02, -0.03], rtol=1e-6)
    assert calls == [1] and v.grad.tolist() == [1.0, 2.0, 3.0]


class _ReturnsZeros:
    def __call__(self, t):
        return F.zeros(5)


@pytest.mark.parametrize(
    "hook, error, message",
    [
        (lambda t: 5, TypeError, "expected Variable, but hook returned 'int'"),
        (lambda t: [t], TypeError, "expected Variable, but hook returned 'list'"),
        (
            lambda t: F.zeros(2, dtype=F.float64),
            RuntimeError,
            r"hook '<lambda>' has changed the type of value \(was torch.FloatTensor got "
            r"torch.DoubleTensor\)",
        ),
        (lambda t: F.zeros(3), RuntimeError, "hook '<lambda>' has changed the size of value"),
        (_ReturnsZeros(), RuntimeError, "hook '<unknown>' has changed the size of value"),
        (lambda t: t.detach(), RuntimeError, "post accumulate grad hooks should return None"),
        (lambda t: t.grad, RuntimeError, "post accumulate grad hooks should return None"),
    ],
)
def test_post_accumulate_hook_results_pytorch_refuses(hook, error, message):
    x = F.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(hook)
    with pytest.raises(error, match=message):
        (x * 3).sum().backward()


def test_the_core_routes_the_hook_to_autograd_before_it_is_imported():
    # In a fresh process the method exists before flambeau.autograd is imported.
    code = (
        "import flambeau as F\n"
        "assert F.Tensor.register_post_accumulate_grad_hook.__module__ == 'flambeau._grad'\n"
        "x = F.ones(2, requires_grad=True)\n"
        "seen = []\n"
        "x.register_post_accumulate_grad_hook(lambda t: seen.append(1))\n"
        "(x * 2).sum().backward()\n"
        "assert seen == [1]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_grad_dtype_casts_accumulated_gradients():
    x = F.ones(3, requires_grad=True)
    x.grad_dtype = F.float64
    (x * 2).sum().backward()
    assert x.grad.dtype == F.float64
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    h = F.ones(3, requires_grad=True)
    h.grad_dtype = F.float16
    (h * 2).sum().backward()
    (h * 2).sum().backward()
    assert h.grad.dtype == F.float16 and h.grad.numpy().tolist() == [4.0, 4.0, 4.0]
    free = F.ones(3, requires_grad=True)
    free.grad_dtype = None
    (free * 2).sum().backward()
    assert free.grad_dtype is None and free.grad.dtype == F.float32


def test_grad_dtype_errors():
    y = F.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        y.grad_dtype  # noqa: B018
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        y.grad_dtype = F.float64
    x = F.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype to 'float64'"):
        x.grad_dtype = F.float64
    x.grad_dtype = F.float32  # matches the existing gradient
