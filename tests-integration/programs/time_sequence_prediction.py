"""Two stacked LSTMCells in double precision learn sine waves, optimized with LBFGS.

Exercises NumPy data through torch.from_numpy, Module.double(), dtype=torch.double
state tensors, Tensor.split over time, torch.cat of per-step outputs, feeding
predictions back in for "future" steps, LBFGS with a closure, evaluation under
no_grad, and .detach().numpy() to hand results back to NumPy.
"""

import numpy as np

import flambeau as torch
import flambeau.nn as nn
import flambeau.optim as optim

HIDDEN = 24


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # predict the future from the model's own outputs
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def make_waves(rng, n, length, period):
    x = np.empty((n, length), dtype=np.int64)
    x[:] = np.arange(length) + rng.integers(-4 * period, 4 * period, n).reshape(n, 1)
    return np.sin(x / period).astype("float64")


def main():
    np.random.seed(0)
    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    data = make_waves(rng, 24, 60, 4.0)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    assert input.dtype == torch.float64

    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)

    with torch.no_grad():
        first_test_loss = criterion(seq(test_input), test_target).item()
    for i in range(4):
        print("STEP: ", i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print("loss:", loss.item())
            loss.backward()
            return loss

        optimizer.step(closure)
        future = 20
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print("test loss:", loss.item())
            y = pred.detach().numpy()
    assert isinstance(y, np.ndarray) and y.shape == (3, 59 + future) and y.dtype == np.float64
    assert loss.item() < first_test_loss / 10, (first_test_loss, loss.item())


if __name__ == "__main__":
    main()
