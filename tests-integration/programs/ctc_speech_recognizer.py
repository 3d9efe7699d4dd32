"""A tiny speech recogniser trained with CTC loss, decoded greedily.

In the style of the DeepSpeech2 / torchaudio ASR tutorials: synthetic "utterances" are
sequences of per-symbol feature frames (each symbol lasts a random number of frames,
with noise) padded into a batch; a Conv1d front end and a bidirectional GRU over
pack_padded_sequence produce per-frame log-probabilities (time-major, as nn.CTCLoss
wants), trained with nn.CTCLoss(blank=0, zero_infinity=True) on concatenated targets
with input_lengths and target_lengths. Greedy CTC decoding (argmax, collapse repeats,
drop blanks) measures the error rate. Checks the loss against a brute-force sum over
alignments for a tiny case, that training cuts the character error rate, and that a
checkpoint round-trips.
"""

import itertools
import math
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

N_SYMBOLS, N_FEATS = 5, 12  # symbols 1..N_SYMBOLS; 0 is the CTC blank


def make_batch(n, g, prototypes):
    feats, targets, in_lens, tgt_lens = [], [], [], []
    for _ in range(n):
        length = int(torch.randint(2, 6, (1,), generator=g))
        labels = torch.randint(1, N_SYMBOLS + 1, (length,), generator=g)
        frames = []
        for s in labels.tolist():
            reps = int(torch.randint(2, 5, (1,), generator=g))
            frames.append(prototypes[s].expand(reps, N_FEATS))
            frames.append(prototypes[0].expand(1, N_FEATS))  # a short pause
        x = torch.cat(frames)
        feats.append(x + 0.3 * torch.randn(x.shape, generator=g))
        targets.append(labels)
        in_lens.append(x.size(0))
        tgt_lens.append(length)
    padded = nn.utils.rnn.pad_sequence(feats, batch_first=True)
    return padded, torch.cat(targets), torch.tensor(in_lens), torch.tensor(tgt_lens), targets


class Recognizer(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.conv = nn.Conv1d(N_FEATS, hidden, kernel_size=3, padding=1)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, N_SYMBOLS + 1)

    def forward(self, x, lengths):
        h = F.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        packed = pack_padded_sequence(h, lengths, batch_first=True, enforce_sorted=False)
        h, _ = self.rnn(packed)
        h, _ = pad_packed_sequence(h, batch_first=True)
        return F.log_softmax(self.out(h), dim=-1).transpose(0, 1)  # (T, N, C)


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(-1).T  # (N, T)
    out = []
    for seq, n in zip(best.tolist(), lengths.tolist()):
        collapsed = [k for k, _ in itertools.groupby(seq[:n])]
        out.append([k for k in collapsed if k != 0])
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def cer(model, batch):
    x, _, in_lens, _, targets = batch
    model.eval()
    with torch.no_grad():
        hyp = greedy_decode(model(x, in_lens), in_lens)
    errors = sum(edit_distance(h, t.tolist()) for h, t in zip(hyp, targets))
    return errors / sum(len(t) for t in targets)


def check_ctc_loss():
    """T=3, target [1]: the alignments collapsing to [1] are every path over {0, 1} of
    length 3 that has a run of 1s and no other symbol: sum their probabilities."""
    torch.manual_seed(3)
    logits = torch.randn(3, 1, 3)
    lp = F.log_softmax(logits, -1)
    total = 0.0
    for path in itertools.product(range(3), repeat=3):
        collapsed = [k for k, _ in itertools.groupby(path) if k != 0]
        if collapsed == [1]:
            total += math.exp(sum(lp[t, 0, k].item() for t, k in enumerate(path)))
    loss = F.ctc_loss(
        lp, torch.tensor([[1]]), torch.tensor([3]), torch.tensor([1]), reduction="sum"
    )
    assert abs(loss.item() + math.log(total)) < 1e-4, (loss.item(), -math.log(total))
    # A target longer than the input is impossible: inf, or 0 with zero_infinity.
    args = (lp, torch.tensor([[1, 2, 1, 2]]), torch.tensor([3]), torch.tensor([4]))
    assert math.isinf(F.ctc_loss(*args, reduction="sum").item())
    assert F.ctc_loss(*args, reduction="sum", zero_infinity=True).item() == 0.0


def main():
    check_ctc_loss()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    prototypes = torch.randn(N_SYMBOLS + 1, N_FEATS, generator=g)
    test = make_batch(64, g, prototypes)
    model = Recognizer()
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    before = cer(model, test)
    for step in range(80):
        model.train()
        x, targets, in_lens, tgt_lens, _ = make_batch(16, g, prototypes)
        loss = ctc(model(x, in_lens), targets, in_lens, tgt_lens)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        if step % 20 == 0:
            print(f"step {step}: ctc loss {loss.item():.4f}")
    after = cer(model, test)
    print(f"character error rate {before:.3f} -> {after:.3f}")
    assert after < 0.15 and after < before / 4, (before, after)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "asr.pt")
        torch.save(model.state_dict(), path)
        restored = Recognizer()
        restored.load_state_dict(torch.load(path, weights_only=True))
    assert cer(restored, test) == after


if __name__ == "__main__":
    main()
