"""A character-level LSTM language model trained on variable-length names.

In the style of the char-RNN name tutorials: names are encoded as index tensors,
padded with nn.utils.rnn.pad_sequence, packed with pack_padded_sequence
(enforce_sorted=False) so the LSTM skips the padding, unpacked with
pad_packed_sequence, and scored by cross_entropy with ignore_index; an
Embedding with padding_idx, a 2-layer LSTM with dropout, clip_grad_norm_,
a StepLR schedule, temperature sampling with torch.multinomial, and a check
that packing gives the same outputs as running each name alone.
"""

import random

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD, BOS, EOS = 0, 1, 2
SYLLABLES = ["ka", "ri", "to", "me", "lu", "sa", "no", "vi"]
LETTERS = sorted(set("".join(SYLLABLES)))
STOI = {c: i + 3 for i, c in enumerate(LETTERS)}
ITOS = {i: c for c, i in STOI.items()}
VOCAB = len(LETTERS) + 3


def make_name(rng):
    # Names are 2-4 syllables, and "ka" is always followed by "ri": a learnable structure.
    out = []
    for _ in range(rng.randint(2, 4)):
        out.append("ri" if out and out[-1] == "ka" else rng.choice(SYLLABLES))
    return "".join(out)


def encode(name):
    return torch.tensor([BOS] + [STOI[c] for c in name] + [EOS], dtype=torch.long)


class CharRNN(nn.Module):
    def __init__(self, vocab, emb=16, hidden=64, layers=2, dropout=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.rnn = nn.LSTM(emb, hidden, num_layers=layers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, inputs, lengths, hidden=None):
        emb = self.embedding(inputs)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        packed_out, hidden = self.rnn(packed, hidden)
        out, out_lengths = pad_packed_sequence(packed_out, batch_first=True)
        return self.decoder(out), hidden, out_lengths

    def step(self, token, hidden):
        out, hidden = self.rnn(self.embedding(token), hidden)
        return self.decoder(out), hidden


def batch_of(names):
    seqs = [encode(n) for n in names]
    inputs = pad_sequence([s[:-1] for s in seqs], batch_first=True, padding_value=PAD)
    targets = pad_sequence([s[1:] for s in seqs], batch_first=True, padding_value=PAD)
    lengths = torch.tensor([len(s) - 1 for s in seqs])
    return inputs, targets, lengths


def sample(model, temperature=0.8, max_len=20):
    model.eval()
    with torch.no_grad():
        token = torch.tensor([[BOS]])
        hidden = None
        chars = []
        for _ in range(max_len):
            logits, hidden = model.step(token, hidden)
            probs = F.softmax(logits[0, -1] / temperature, dim=-1)
            idx = torch.multinomial(probs, 1).item()
            if idx == EOS:
                break
            chars.append(ITOS.get(idx, "?"))
            token = torch.tensor([[idx]])
    return "".join(chars)


def main():
    rng = random.Random(0)
    torch.manual_seed(0)
    train = [make_name(rng) for _ in range(400)]
    valid = [make_name(rng) for _ in range(64)]
    model = CharRNN(VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    assert model.embedding.weight[PAD].abs().sum().item() == 0

    def evaluate():
        model.eval()
        inputs, targets, lengths = batch_of(valid)
        with torch.no_grad():
            logits, _, out_lengths = model(inputs, lengths)
        assert torch.equal(out_lengths, lengths)
        assert logits.shape == (len(valid), int(lengths.max()), VOCAB)
        return F.cross_entropy(
            logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=PAD
        ).item()

    initial = evaluate()
    print(f"initial valid loss {initial:.3f}")
    for epoch in range(8):
        model.train()
        rng.shuffle(train)
        total = 0.0
        for i in range(0, len(train), 32):
            inputs, targets, lengths = batch_of(train[i : i + 32])
            logits, _, _ = model(inputs, lengths)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=PAD)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
        scheduler.step()
        print(
            f"epoch {epoch}: train {total / (len(train) / 32):.3f} valid {evaluate():.3f}"
            f" lr {scheduler.get_last_lr()[0]:.5f}"
        )
    final = evaluate()
    assert final < 0.7 * initial, (initial, final)
    assert abs(scheduler.get_last_lr()[0] - 1e-2 * 0.5**2) < 1e-12
    # The padding row got no gradient, so it is still zero.
    assert model.embedding.weight[PAD].abs().sum().item() == 0

    # The model learned that "ka" is followed by "ri".
    model.eval()
    with torch.no_grad():
        prefix = encode("lukar")[:-1].unsqueeze(0)
        logits, _, _ = model(prefix, torch.tensor([prefix.size(1)]))
        assert logits[0, -1].argmax().item() == STOI["i"], logits[0, -1]

    # Packing matches running each sequence alone (no padding leaks in).
    names = ["kari", "tomesalu", "vi"]
    inputs, _, lengths = batch_of(names)
    with torch.no_grad():
        packed_logits, (h_n, c_n), _ = model(inputs, lengths)
        for b, name in enumerate(names):
            alone = encode(name)[:-1].unsqueeze(0)
            logits, (h1, _), _ = model(alone, torch.tensor([alone.size(1)]))
            n = lengths[b].item()
            assert torch.allclose(packed_logits[b, :n], logits[0], atol=1e-5)
            assert torch.allclose(h_n[:, b], h1[:, 0], atol=1e-5)
            # pad_packed_sequence fills padding with zeros, which decode to the bias.
            pad_rows = packed_logits[b, n:]
            assert torch.allclose(pad_rows, model.decoder.bias.expand_as(pad_rows))
    assert h_n.shape == (2, 3, 64) and c_n.shape == (2, 3, 64)

    torch.manual_seed(1)
    samples = [sample(model) for _ in range(8)]
    print("samples:", samples)
    assert all(set(s) <= set(LETTERS) for s in samples)


if __name__ == "__main__":
    main()
