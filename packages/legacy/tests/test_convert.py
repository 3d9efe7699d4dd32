"""Converting legacy modules to flambeau.nn keeps the weights; the result trains with
autograd."""

from __future__ import annotations

import pytest

import flambeau
from flambeau.legacy import nn

fnn = pytest.importorskip("flambeau.nn")
pytest.importorskip("flambeau.autograd")


def test_sequential_mlp_converts_and_fine_tunes():
    flambeau.manual_seed(0)
    old = nn.Sequential().add(nn.Linear(4, 5)).add(nn.ReLU()).add(nn.Linear(5, 3))
    old.add(nn.LogSoftMax())
    new = nn.to_nn(old)
    assert isinstance(new, fnn.Sequential) and isinstance(new[0], fnn.Linear)
    x = flambeau.randn(6, 4)
    assert flambeau.allclose(new(x).detach(), old.forward(x), atol=1e-6)
    assert flambeau.equal(new[0].weight.detach(), old.modules[0].weight)
    # The copy is independent, and trains with autograd.
    opt = flambeau.optim.SGD(new.parameters(), lr=0.1)
    loss = fnn.functional.nll_loss(new(x), flambeau.tensor([0, 1, 2, 0, 1, 2]))
    loss.backward()
    opt.step()
    assert not flambeau.equal(new[0].weight.detach(), old.modules[0].weight)


@pytest.mark.parametrize("make,shape", [
    (lambda: nn.SpatialConvolution(2, 3, 3, 2, 2, 1, 1, 0), (2, 2, 6, 5)),
    (lambda: nn.SpatialConvolutionMM(2, 3, 3, 3, 1, 1, 1), (1, 2, 5, 5)),
    (lambda: nn.SpatialDilatedConvolution(2, 2, 3, 3, 1, 1, 2, 2, 2, 2), (1, 2, 6, 6)),
    (lambda: nn.SpatialFullConvolution(2, 3, 3, 3, 2, 2, 1, 1, 1, 1), (1, 2, 3, 3)),
    (lambda: nn.VolumetricConvolution(2, 2, 2, 2, 2), (1, 2, 3, 3, 3)),
    (lambda: nn.SpatialMaxPooling(3, 3, 2, 2, 1, 1).ceil(), (1, 2, 6, 6)),
    (lambda: nn.SpatialAveragePooling(2, 2, 2, 2), (1, 2, 4, 4)),
    (lambda: nn.SpatialBatchNormalization(2), (3, 2, 2, 2)),
    (lambda: nn.BatchNormalization(3), (4, 3)),
    (lambda: nn.PReLU(3), (2, 3)),
    (lambda: nn.Tanh(), (2, 3)), (lambda: nn.Sigmoid(), (2, 3)), (lambda: nn.ReLU6(), (2, 3)),
    (lambda: nn.ELU(0.5), (2, 3)), (lambda: nn.LeakyReLU(0.2), (2, 3)),
    (lambda: nn.HardTanh(-2, 2), (2, 3)), (lambda: nn.SoftPlus(), (2, 3)),
    (lambda: nn.SoftMax(), (2, 3)), (lambda: nn.Threshold(0.1, 2), (2, 3)),
    (lambda: nn.Dropout(0.3), (2, 3)), (lambda: nn.Identity(), (2, 3)),
])  # fmt: skip
def test_layers_convert_with_weights(make, shape):
    flambeau.manual_seed(1)
    old = make()
    old.evaluate()
    new = nn.to_nn(old)
    new.eval()
    x = flambeau.randn(*shape) * 3
    with flambeau.no_grad():
        assert flambeau.allclose(new(x), old.forward(x), atol=1e-5)


def test_double_modules_convert_to_double_and_unknown_raise():
    new = nn.to_nn(nn.Linear(2, 2).double())
    assert new.weight.dtype == flambeau.float64
    with pytest.raises(TypeError, match="no flambeau.nn counterpart"):
        nn.to_nn(nn.CAddTable())
