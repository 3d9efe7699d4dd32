"""Tabular classification with quantile-binned features, in the style of tabular
preprocessing pipelines (piecewise-linear encodings, KBinsDiscretizer-like binning).

Synthetic credit-scoring style data with skewed numeric columns, missing values (NaN)
and a categorical column. The preprocessing is done with tensor ops: torch.nanquantile
for per-column bin edges (NaN-aware), torch.nan_to_num / torch.where imputation with
nanmedian, torch.bucketize and torch.searchsorted (right=, side=, sorter=) for the bin
index, torch.histc and torch.bincount to check the bins are balanced, torch.unique
(return_inverse, return_counts) for the categorical column, and a piecewise-linear
encoding built from the edges. A model of per-feature bin embeddings (nn.Embedding
with offsets) plus an MLP over the piecewise-linear encoding trains with
BCEWithLogitsLoss(pos_weight=...). Checks the quantiles and bucket indices against
NumPy, and held-out accuracy.
"""

import numpy as np

import flambeau as torch
from flambeau import nn

N_BINS = 8


def make_data(n, rng):
    income = rng.lognormal(mean=3.0, sigma=0.8, size=n)
    age = rng.uniform(18, 80, size=n)
    debt = rng.exponential(scale=20.0, size=n)
    city = rng.choice(np.array([3, 17, 42, 99]), size=n, p=[0.4, 0.3, 0.2, 0.1])
    score = (
        1.2 * np.log(income) - 0.04 * debt + 0.5 * ((age > 30) & (age < 60)) + 0.4 * (city == 42)
    )
    y = (score + 0.3 * rng.normal(size=n) > np.median(score) + 0.4).astype(np.float32)
    X = np.stack([income, age, debt], 1).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan  # missing values
    return X, city, y


class Binner:
    """Per-column quantile bins fitted on the training split."""

    def fit(self, X):
        qs = torch.linspace(0, 1, N_BINS + 1, dtype=X.dtype)[1:-1]
        # nanquantile over dim 0 gives (q, columns); edges per column are rows of .T
        self.edges = torch.nanquantile(X, qs, dim=0).T.contiguous()
        self.medians = torch.nanmedian(X, dim=0).values
        self.lo = torch.from_numpy(np.nanmin(X.numpy(), 0))
        self.hi = torch.from_numpy(np.nanmax(X.numpy(), 0))
        return self

    def impute(self, X):
        return torch.where(torch.isnan(X), self.medians.expand_as(X), X)

    def bins(self, X):
        X = self.impute(X)
        cols = [torch.bucketize(X[:, j].contiguous(), self.edges[j]) for j in range(X.shape[1])]
        return torch.stack(cols, 1)

    def piecewise_linear(self, X):
        """Each column -> N_BINS values: 1 for the bins left of x, the fraction of x's own
        bin below x, 0 after."""
        X = self.impute(X)
        full = torch.cat([self.lo[:, None], self.edges, self.hi[:, None]], 1)  # (cols, N_BINS+1)
        left, right = full[:, :-1], full[:, 1:]
        frac = (X[:, :, None] - left) / (right - left).clamp_min(1e-6)
        return frac.clamp(0, 1).flatten(1)


class BinModel(nn.Module):
    def __init__(self, n_cols, n_cities, dim=8):
        super().__init__()
        self.register_buffer("offsets", torch.arange(n_cols) * (N_BINS))
        self.bin_emb = nn.Embedding(n_cols * N_BINS, dim)
        self.city_emb = nn.Embedding(n_cities, dim)
        self.mlp = nn.Sequential(
            nn.Linear(n_cols * N_BINS + (n_cols + 1) * dim, 32), nn.ReLU(), nn.Linear(32, 1)
        )

    def forward(self, bins, city, ple):
        e = self.bin_emb(bins + self.offsets).flatten(1)
        return self.mlp(torch.cat([ple, e, self.city_emb(city)], 1)).squeeze(1)


def check_against_numpy(X_np, binner, bins):
    qs = np.linspace(0, 1, N_BINS + 1)[1:-1]
    ref_edges = np.nanquantile(X_np, qs, axis=0).T
    assert np.allclose(binner.edges.numpy(), ref_edges, rtol=1e-4), "nanquantile"
    imputed = np.where(np.isnan(X_np), np.nanmedian(X_np, 0), X_np)
    # torch.bucketize(right=False) is np.searchsorted(side="left")
    ref_bins = np.stack(
        [np.searchsorted(ref_edges[j], imputed[:, j], side="left") for j in range(3)], 1
    )
    assert (bins.numpy() == ref_bins).mean() > 0.999, "bucketize"

    col = torch.from_numpy(imputed[:, 2].copy())
    sorter = torch.argsort(col)
    v = torch.tensor([0.0, 5.0, 20.0, 1e6])
    got = torch.searchsorted(col, v, sorter=sorter, side="right")
    ref = np.searchsorted(imputed[:, 2], v.numpy(), side="right", sorter=sorter.numpy())
    assert got.tolist() == ref.tolist()
    edges = binner.edges[0]
    assert torch.equal(
        torch.searchsorted(edges, v, right=True), torch.bucketize(v, edges, right=True)
    )


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    X_np, city_np, y_np = make_data(3000, rng)
    X, y = torch.from_numpy(X_np), torch.from_numpy(y_np)
    assert torch.isnan(X).any() and X.isnan().sum().item() == np.isnan(X_np).sum()

    cities, city_idx, counts = torch.unique(
        torch.from_numpy(city_np), return_inverse=True, return_counts=True
    )
    assert cities.tolist() == [3, 17, 42, 99] and counts.sum().item() == 3000
    assert torch.equal(cities[city_idx], torch.from_numpy(city_np))

    perm = torch.randperm(3000)
    tr, te = perm[:2400], perm[2400:]
    binner = Binner().fit(X[tr])
    bins = binner.bins(X)
    check_against_numpy(X_np[tr.numpy()], binner, bins[tr])
    assert bins.min().item() >= 0 and bins.max().item() <= N_BINS - 1

    # quantile bins are balanced over the observed (not imputed) training values
    observed = tr[~torch.isnan(X[tr, 1])]
    per_bin = torch.bincount(bins[observed, 1], minlength=N_BINS)
    hist = torch.histc(bins[observed, 1].float(), bins=N_BINS, min=0, max=N_BINS - 1)
    assert torch.equal(per_bin.float(), hist), (per_bin, hist)
    assert (per_bin.float() / per_bin.sum()).sub(1 / N_BINS).abs().max() < 0.03, per_bin
    print("bin counts of 'age':", per_bin.tolist())

    ple = binner.piecewise_linear(X)
    assert ple.shape == (3000, 3 * N_BINS) and ple.min() >= 0 and ple.max() <= 1
    # the encoding's row sums grow with the value: its median sits mid-way
    sums = ple[tr, N_BINS : 2 * N_BINS].sum(1)
    q = torch.quantile(sums, torch.tensor([0.25, 0.5, 0.75]), interpolation="nearest")
    assert q[0] < q[1] < q[2] and abs(q[1].item() - N_BINS / 2) < 0.5, q

    model = BinModel(3, len(cities))
    pos_weight = (1 - y[tr].mean()) / y[tr].mean()
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-5)
    for epoch in range(25):
        for idx in tr[torch.randperm(len(tr))].split(200):
            opt.zero_grad()
            loss = loss_fn(model(bins[idx], city_idx[idx], ple[idx]), y[idx])
            loss.backward()
            opt.step()
        if epoch % 8 == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")

    model.eval()
    with torch.no_grad():
        logits = model(bins[te], city_idx[te], ple[te])
    acc = ((logits > 0).float() == y[te]).float().mean().item()
    base = max(y[te].mean().item(), 1 - y[te].mean().item())
    print(f"held-out accuracy {acc:.3f} (majority class {base:.3f})")
    assert acc > base + 0.12, (acc, base)
    print("quantile binned tabular OK")


if __name__ == "__main__":
    main()
