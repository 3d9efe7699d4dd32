"""An orthogonal RNN on a long-delay recall task with torch.nn.utils.parametrize.

In the style of expRNN / orthogonal-RNN code: the recurrent matrix of an nn.RNNCell
is constrained with torch.nn.utils.parametrizations.orthogonal (matrix_exp and cayley
maps), a custom parametrization (a Skew module with right_inverse) is registered with
parametrize.register_parametrization, and a positive-definite input scaling uses a
chain of two parametrizations on one tensor. Also exercised: parametrize.cached(),
the parametrizations.<name>.original attribute, state_dict round-trips of a
parametrized module, remove_parametrizations(leave_parametrized=True), and
weight_norm (torch.nn.utils.parametrizations.weight_norm) on the readout. Checks
orthogonality holds during training and the model learns to recall, after a long
run of noise symbols, the symbol it saw first.
"""

import flambeau as torch
import flambeau.nn.functional as F
import flambeau.nn.utils.parametrize as P
from flambeau import nn
from flambeau.nn.utils.parametrizations import orthogonal, weight_norm

N_SYMBOLS, DELAY = 4, 6


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.T

    def right_inverse(self, A):
        return A.triu(1)


class MatrixExp(nn.Module):
    def forward(self, X):
        return torch.linalg.matrix_exp(X)


class Positive(nn.Module):
    def forward(self, X):
        return F.softplus(X)

    def right_inverse(self, Y):
        return Y.expm1().log()  # softplus^{-1}


class Scale(nn.Module):
    def forward(self, X):
        return 2.0 * X

    def right_inverse(self, Y):
        return Y / 2.0


def recall_task(batch, generator):
    """The first symbol, then DELAY random distractors, then a marker: name the first."""
    symbols = torch.randint(0, N_SYMBOLS, (batch, 1 + DELAY), generator=generator)
    marker = torch.full((batch, 1), N_SYMBOLS, dtype=torch.long)
    return torch.cat([symbols, marker], 1), symbols[:, 0]


class OrthoRNN(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(N_SYMBOLS + 1, hidden)
        self.cell = nn.RNNCell(hidden, hidden, nonlinearity="tanh")
        # a hand-rolled expRNN parametrization: W = exp(skew(X))
        P.register_parametrization(self.cell, "weight_hh", Skew())
        P.register_parametrization(self.cell, "weight_hh", MatrixExp())
        self.gain = nn.Parameter(torch.ones(hidden))
        P.register_parametrization(self, "gain", Positive())
        P.register_parametrization(self, "gain", Scale())
        self.readout = weight_norm(nn.Linear(hidden, N_SYMBOLS))

    def forward(self, tokens):
        x = self.embed(tokens) * self.gain
        h = torch.zeros(tokens.shape[0], self.cell.hidden_size)
        with P.cached():  # W = exp(skew(X)) computed once per forward
            for t in range(tokens.shape[1]):
                h = self.cell(x[:, t], h)
        return self.readout(h)


def check_library_orthogonal():
    torch.manual_seed(1)
    for orthogonal_map in ("matrix_exp", "cayley", "householder"):
        lin = orthogonal(nn.Linear(6, 6), orthogonal_map=orthogonal_map)
        W = lin.weight
        assert torch.allclose(W @ W.T, torch.eye(6), atol=1e-5), orthogonal_map
        assert P.is_parametrized(lin, "weight") and not P.is_parametrized(lin, "bias")
        opt = torch.optim.SGD(lin.parameters(), lr=0.05)
        for _ in range(5):
            opt.zero_grad()
            (lin(torch.randn(8, 6)) - 1).pow(2).mean().backward()
            opt.step()
        W = lin.weight
        assert torch.allclose(W @ W.T, torch.eye(6), atol=1e-4), orthogonal_map
    # assigning an orthogonal matrix goes through right_inverse
    lin = orthogonal(nn.Linear(4, 4))
    Q, _ = torch.linalg.qr(torch.randn(4, 4))
    lin.weight = Q
    assert torch.allclose(lin.weight, Q, atol=1e-5)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    check_library_orthogonal()

    model = OrthoRNN()
    names = {n for n, _ in model.named_parameters()}
    assert "cell.parametrizations.weight_hh.original" in names, names
    assert "parametrizations.gain.original" in names
    assert {
        "readout.parametrizations.weight.original0",
        "readout.parametrizations.weight.original1",
    } <= names
    assert len(model.cell.parametrizations.weight_hh) == 2
    # registering Positive ran its right_inverse on the ones (softplus(original) = 1);
    # Scale, appended later, doubles that without touching original
    assert torch.allclose(F.softplus(model.parametrizations.gain.original), torch.ones(32))
    assert torch.allclose(model.gain, torch.full((32,), 2.0), atol=1e-5)
    model.gain = torch.full((32,), 0.5)  # assignment runs the whole chain's right_inverse
    assert torch.allclose(model.gain, torch.full((32,), 0.5), atol=1e-5)

    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    blank_loss = None
    for step in range(150):
        inputs, targets = recall_task(64, g)
        loss = F.cross_entropy(model(inputs), targets)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == 0:
            blank_loss = loss.item()
        if step % 30 == 0:
            W = model.cell.weight_hh
            err = (W @ W.T - torch.eye(32)).abs().max().item()
            print(f"step {step} loss {loss.item():.4f} orthogonality error {err:.1e}")
            assert err < 1e-4

    inputs, targets = recall_task(256, g)
    with torch.no_grad():
        pred = model(inputs).argmax(-1)
    acc = (pred == targets).float().mean().item()
    print(f"recall accuracy {acc:.3f} (chance {1 / N_SYMBOLS:.2f}), first loss {blank_loss:.3f}")
    assert acc > 0.6, acc

    # state_dict round trip into a fresh parametrized model
    state = model.state_dict()
    assert "cell.parametrizations.weight_hh.original" in state
    clone = OrthoRNN()
    clone.load_state_dict(state)
    with torch.no_grad():
        assert torch.allclose(clone(inputs[:4]), model(inputs[:4]), atol=1e-5)

    # bake the constraint into a plain weight
    W = model.cell.weight_hh.detach().clone()
    P.remove_parametrizations(model.cell, "weight_hh", leave_parametrized=True)
    assert not P.is_parametrized(model.cell, "weight_hh")
    assert isinstance(model.cell.weight_hh, nn.Parameter)
    assert torch.allclose(model.cell.weight_hh, W)
    assert "cell.weight_hh" in model.state_dict()
    print("orthogonal rnn parametrize OK")


if __name__ == "__main__":
    main()
