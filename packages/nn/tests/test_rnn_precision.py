"""The fused recurrent layers in float32 stay within 1e-5 of the same layers in float64
(same weights, same inputs), forward and gradients, for every mode and option."""

import numpy as np
import pytest

import flambeau as F
from flambeau import nn

CASES = [
    ("LSTM", {}),
    ("LSTM", {"proj_size": 8, "num_layers": 2, "bidirectional": True}),
    ("GRU", {"num_layers": 2}),
    ("GRU", {"bidirectional": True, "bias": False}),
    ("RNN", {"nonlinearity": "tanh"}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
]


@pytest.mark.parametrize("kind, options", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_float32_matches_float64(kind, options):
    F.manual_seed(0)
    single = getattr(nn, kind)(12, 16, **options)
    double = getattr(nn, kind)(12, 16, **options).double()
    double.load_state_dict({k: v.double() for k, v in single.state_dict().items()})
    x = F.randn(20, 4, 12) * 0.5
    outs, grads = [], []
    for module, dtype in ((single, F.float32), (double, F.float64)):
        xi = x.to(dtype).detach().clone().requires_grad_()
        out, _ = module(xi)
        out.sum().backward()
        outs.append(out.double().detach().numpy())
        grads.append(
            [xi.grad.double().numpy()] + [p.grad.double().numpy() for p in module.parameters()]
        )
    np.testing.assert_allclose(outs[0], outs[1], rtol=0, atol=1e-5)
    for g32, g64 in zip(grads[0], grads[1]):
        scale = max(1.0, float(np.abs(g64).max()))
        np.testing.assert_allclose(g32 / scale, g64 / scale, rtol=0, atol=1e-5)
