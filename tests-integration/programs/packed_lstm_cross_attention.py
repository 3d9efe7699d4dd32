"""Variable-length sequence regression: a packed bidirectional LSTM with projections
and a cross-attention pooling head.

In the style of set/sequence pooling models: sequences of different lengths are
packed with nn.utils.rnn.pack_sequence(enforce_sorted=False) and run through a
2-layer bidirectional nn.LSTM with proj_size; the PackedSequence's data,
batch_sizes, sorted/unsorted indices are checked, unpacked with pad_packed_sequence,
unpack_sequence and unpad_sequence. Learned queries attend over the LSTM states with
nn.MultiheadAttention(kdim=..., vdim=..., batch_first=True), a boolean
key_padding_mask and need_weights=True with average_attn_weights=False (per-head
weights), plus an additive float attn_mask. Targets are the sum and the mean of
each sequence. Checks the packing bookkeeping, that padded keys get no attention,
and that both targets are learned.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils.rnn import (
    PackedSequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

HIDDEN, PROJ, HEADS, QUERIES = 16, 8, 2, 2


def make_batch(batch, g):
    lengths = torch.randint(2, 12, (batch,), generator=g)
    seqs = [torch.rand(int(n), 1, generator=g) * 2 - 1 for n in lengths]
    targets = torch.stack([torch.stack([s.sum(), s.mean()]) for s in seqs])
    return seqs, lengths, targets


class Pooler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(
            1, HIDDEN, num_layers=2, bidirectional=True, proj_size=PROJ, batch_first=True
        )
        self.queries = nn.Parameter(torch.randn(QUERIES, 16) * 0.1)
        # keys/values come from the LSTM (2 * PROJ wide), queries live in a 16-wide space
        self.attn = nn.MultiheadAttention(16, HEADS, kdim=2 * PROJ, vdim=2 * PROJ, batch_first=True)
        self.out = nn.Linear(QUERIES * 16 + 1, 2)

    def forward(self, seqs):
        packed = pack_sequence(seqs, enforce_sorted=False)
        states, lengths = pad_packed_sequence(self.lstm(packed)[0], batch_first=True)
        B, T, _ = states.shape
        pad = torch.arange(T)[None, :] >= lengths[:, None]
        q = self.queries.expand(B, -1, -1)
        # the second query is nudged towards late positions by an additive mask
        bias = torch.zeros(QUERIES, T)
        bias[1] = torch.linspace(-1.0, 0.0, T)
        pooled, weights = self.attn(
            q, states, states, key_padding_mask=pad, attn_mask=bias, need_weights=True,
            average_attn_weights=False,
        )  # fmt: skip
        feats = torch.cat([pooled.flatten(1), lengths[:, None].float() / 10], 1)
        return self.out(feats), weights, pad


def check_packing(g):
    seqs = [
        torch.arange(3.0)[:, None],
        torch.arange(5.0)[:, None] + 10,
        torch.arange(1.0)[:, None] + 20,
    ]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert isinstance(packed, PackedSequence)
    assert packed.batch_sizes.tolist() == [3, 2, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [
        1,
        0,
        2,
    ]
    assert packed.data[:3, 0].tolist() == [10.0, 0.0, 20.0]
    back = unpack_sequence(packed)
    assert all(torch.equal(a, b) for a, b in zip(back, seqs))
    padded, lengths = pad_packed_sequence(packed, batch_first=True, padding_value=-1.0)
    assert padded.shape == (3, 5, 1) and lengths.tolist() == [3, 5, 1] and padded[2, 1, 0] == -1
    assert torch.equal(pad_sequence(seqs, batch_first=True, padding_value=-1.0), padded)
    parts = unpad_sequence(padded, lengths, batch_first=True)
    assert all(torch.equal(a, b) for a, b in zip(parts, seqs))
    lstm = nn.LSTM(1, 6, proj_size=3, bidirectional=True)
    out, (h, c) = lstm(packed)
    assert out.data.shape == (9, 6) and h.shape == (2, 3, 3) and c.shape == (2, 3, 6)
    # the final forward state of each sequence is its output at its last step
    full, lens = pad_packed_sequence(out)
    for i, n in enumerate(lens.tolist()):
        assert torch.allclose(full[n - 1, i, :3], h[0, i]), i


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    check_packing(g)

    model = Pooler()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for step in range(80):
        seqs, lengths, targets = make_batch(24, g)
        pred, _, _ = model(seqs)
        loss = F.mse_loss(pred, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print(f"step {step} loss {loss.item():.4f}")

    seqs, lengths, targets = make_batch(256, g)
    model.eval()
    with torch.no_grad():
        pred, weights, pad = model(seqs)
    assert weights.shape == (256, HEADS, QUERIES, int(lengths.max()))
    assert weights.masked_select(pad[:, None, None, :].expand_as(weights)).abs().max() == 0
    assert torch.allclose(weights.sum(-1), torch.ones(256, HEADS, QUERIES), atol=1e-5)
    err = (pred - targets).pow(2).mean(0)
    var = targets.var(0)
    print(f"relative mse: sum {(err[0] / var[0]).item():.3f}, mean {(err[1] / var[1]).item():.3f}")
    assert err[0] / var[0] < 0.1 and err[1] / var[1] < 0.5, err / var
    print("packed lstm cross attention OK")


if __name__ == "__main__":
    main()
