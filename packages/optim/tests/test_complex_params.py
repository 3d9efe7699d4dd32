"""Complex parameters are optimized as the pairs of reals they hold (PyTorch's rule):
the trajectory of a complex parameter equals that of a real (n, 2) twin holding its
real and imaginary parts, fed the same gradient."""

import numpy as np
import pytest

import flambeau
from flambeau import optim

TARGET = np.array([[0.2, -1.0], [1.5, 0.5], [-0.3, 0.0]], dtype=np.float32)

CASES = [
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (optim.Adam, dict(lr=0.1)),
    (optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.1)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (optim.Adagrad, dict(lr=0.1)),
    (optim.Adadelta, dict(lr=0.5)),
    (optim.Adamax, dict(lr=0.1)),
    (optim.NAdam, dict(lr=0.1)),
    (optim.RAdam, dict(lr=0.1)),
    (optim.ASGD, dict(lr=0.1, t0=1)),
    (optim.Rprop, dict(lr=0.1)),
]


def _start():
    return np.array([[1.0, 2.0], [-0.5, 0.3], [0.7, -0.2]], dtype=np.float32)


def _run(make_opt, complex_param, steps=5):
    start = flambeau.tensor(_start())
    target = flambeau.tensor(TARGET)
    if complex_param:
        p = flambeau.view_as_complex(start).clone().requires_grad_(True)
        c = flambeau.view_as_complex(target)
    else:
        p = start.clone().requires_grad_(True)
    opt = make_opt([p])
    for _ in range(steps):
        opt.zero_grad()
        # |p - c|^2 summed; its gradient is 2 (p - c) in both forms
        loss = ((p - c).abs() ** 2).sum() if complex_param else ((p - target) ** 2).sum()
        loss.backward()
        opt.step()
    out = p.detach()
    return (flambeau.view_as_real(out) if complex_param else out).numpy(), opt


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("cls,kwargs", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_complex_parameter_steps_as_its_real_twin(cls, kwargs, foreach):
    as_complex, opt = _run(lambda ps: cls(ps, foreach=foreach, **kwargs), True)
    as_real, _ = _run(lambda ps: cls(ps, foreach=foreach, **kwargs), False)
    np.testing.assert_allclose(as_complex, as_real, rtol=1e-5, atol=1e-6)
    assert not np.allclose(as_complex, _start())  # it moved
    # the state keeps the parameter's dtype and shape
    for value in opt.state_dict()["state"][0].values():
        if isinstance(value, flambeau.Tensor) and value.dim() > 0:
            assert value.dtype == flambeau.complex64 and value.shape == (3,)


def test_lbfgs_complex_parameter_converges():
    p = flambeau.tensor([1.0 + 2.0j, -0.5 + 0.3j], requires_grad=True)
    c = flambeau.tensor([0.2 - 1.0j, 1.5 + 0.5j])
    opt = optim.LBFGS([p])

    def closure():
        opt.zero_grad()
        loss = ((p - c).abs() ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(p.detach().numpy(), c.numpy(), atol=1e-5)
