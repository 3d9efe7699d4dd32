"""A BiLSTM-CRF named-entity tagger with batched forward algorithm and Viterbi decoding.

In the style of the PyTorch BiLSTM-CRF tutorial, batched: word embeddings into a
bidirectional LSTM over pack_padded_sequence (enforce_sorted=False), emission scores from
a linear layer, a CRF with learned transition, start and end scores; the partition
function by the forward algorithm with torch.logsumexp over the previous tag, masked by
torch.where for padded steps; the gold path score with gather; Viterbi decoding with
max over the previous tag and backpointers followed backwards. Checks the log-partition
and the Viterbi path against brute force over every tag sequence, then trains on
synthetic sentences (BIO tags for person and place names) and checks the tagging
accuracy, the entity-level F1, and that the learned transitions forbid O -> I-PER.
"""

import itertools
import random

import flambeau as torch
import flambeau.nn as nn
from flambeau.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
T = len(TAGS)
PAD = 0
FIRST = ["anna", "bruno", "carla", "dmitri", "elena", "farid"]
LAST = ["smith", "rossi", "ivanova", "haddad", "kim"]
PLACE_HEAD = ["new", "san", "port", "lake"]
PLACE_TAIL = ["york", "paulo", "louis", "geneva", "tahoe"]
FILLER = ["the", "went", "to", "met", "in", "and", "saw", "from", "with", "today", "a", "visit"]
WORDS = ["<pad>"] + sorted(set(FIRST + LAST + PLACE_HEAD + PLACE_TAIL + FILLER))
STOI = {w: i for i, w in enumerate(WORDS)}


def make_sentence(rng):
    words, tags = [], []
    for _ in range(rng.randint(3, 7)):
        r = rng.random()
        if r < 0.25:
            span = [rng.choice(FIRST)] + ([rng.choice(LAST)] if rng.random() < 0.6 else [])
            kind = "PER"
        elif r < 0.45:
            span = [rng.choice(PLACE_HEAD), rng.choice(PLACE_TAIL)]
            if rng.random() < 0.3:
                span = [rng.choice(PLACE_TAIL)]
            kind = "LOC"
        else:
            words.append(rng.choice(FILLER))
            tags.append(0)
            continue
        words += span
        tags += [TAGS.index(f"B-{kind}")] + [TAGS.index(f"I-{kind}")] * (len(span) - 1)
    return [STOI[w] for w in words], tags


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))
        self.start = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))

    def log_partition(self, emissions, mask):
        # emissions: (B, L, T); mask: (B, L) bool, true for real tokens.
        score = self.start + emissions[:, 0]
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(
                score.unsqueeze(2) + self.transitions.unsqueeze(0) + emissions[:, t].unsqueeze(1),
                dim=1,
            )
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
        return torch.logsumexp(score + self.end, dim=1)

    def path_score(self, emissions, tags, mask):
        B, L, _ = emissions.shape
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, L)
        trans = self.transitions[tags[:, :-1], tags[:, 1:]]  # (B, L - 1)
        score = self.start[tags[:, 0]] + (emit * mask).sum(1) + (trans * mask[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return score + self.end[last]

    def neg_log_likelihood(self, emissions, tags, mask):
        return (self.log_partition(emissions, mask) - self.path_score(emissions, tags, mask)).mean()

    @torch.no_grad()
    def viterbi(self, emissions, mask):
        B, L, _ = emissions.shape
        score = self.start + emissions[:, 0]
        history = []
        for t in range(1, L):
            best, idx = (score.unsqueeze(2) + self.transitions.unsqueeze(0)).max(dim=1)
            nxt = best + emissions[:, t]
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
            history.append(idx)
        score = score + self.end
        lengths = mask.sum(1).tolist()
        paths = []
        for b in range(B):
            best_last = score[b].argmax().item()
            path = [best_last]
            for idx in reversed(history[: lengths[b] - 1]):
                path.append(idx[b, path[-1]].item())
            paths.append(path[::-1])
        return paths


class BiLSTMCRF(nn.Module):
    def __init__(self, vocab, embed_dim=24, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(embed_dim, hidden // 2, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden, T)
        self.crf = CRF(T)

    def emissions(self, words, lengths):
        packed = pack_padded_sequence(
            self.embedding(words), lengths, batch_first=True, enforce_sorted=False
        )
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=words.size(1))
        return self.hidden2tag(out)


def batchify(sentences):
    words = pad_sequence([torch.tensor(w) for w, _ in sentences], batch_first=True)
    tags = pad_sequence([torch.tensor(t) for _, t in sentences], batch_first=True)
    lengths = torch.tensor([len(w) for w, _ in sentences])
    return words, tags, lengths, words != PAD


def spans(tags):
    out, start = set(), None
    for i, tag in enumerate(list(tags) + [0]):
        name = TAGS[tag]
        if start is not None and not name.startswith("I-"):
            out.add((start, i, TAGS[tags[start]][2:]))
            start = None
        if name.startswith("B-"):
            start = i
    return out


def brute_force_check(crf):
    emissions = torch.randn(2, 4, T)
    mask = torch.tensor([[True] * 4, [True, True, True, False]])
    log_z = crf.log_partition(emissions, mask)
    paths = crf.viterbi(emissions, mask)
    for b, length in enumerate([4, 3]):
        scores = {}
        for seq in itertools.product(range(T), repeat=length):
            tags = torch.tensor(list(seq) + [0] * (4 - length)).unsqueeze(0)
            scores[seq] = crf.path_score(emissions[b : b + 1], tags, mask[b : b + 1]).item()
        all_scores = torch.tensor(list(scores.values()))
        assert abs(torch.logsumexp(all_scores, 0).item() - log_z[b].item()) < 1e-4
        assert tuple(paths[b]) == max(scores, key=scores.get), (paths[b], b)


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    train = [make_sentence(rng) for _ in range(600)]
    test = [make_sentence(rng) for _ in range(200)]

    model = BiLSTMCRF(len(WORDS))
    with torch.no_grad():
        brute_force_check(model.crf)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def evaluate():
        words, tags, lengths, mask = batchify(test)
        model.eval()
        paths = model.crf.viterbi(model.emissions(words, lengths), mask)
        model.train()
        correct = total = tp = n_pred = n_gold = 0
        for (_, gold), pred in zip(test, paths):
            correct += sum(int(p == g) for p, g in zip(pred, gold))
            total += len(gold)
            pred_spans, gold_spans = spans(pred), spans(gold)
            tp += len(pred_spans & gold_spans)
            n_pred += len(pred_spans)
            n_gold += len(gold_spans)
        f1 = 2 * tp / max(n_pred + n_gold, 1)
        return correct / total, f1

    acc0, _ = evaluate()
    first = None
    for epoch in range(5):
        rng.shuffle(train)
        total = 0.0
        for i in range(0, len(train), 32):
            words, tags, lengths, mask = batchify(train[i : i + 32])
            loss = model.crf.neg_log_likelihood(model.emissions(words, lengths), tags, mask)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total += loss.item()
        first = total if first is None else first
        acc, f1 = evaluate()
        print(f"epoch {epoch}: loss {total / 19:.3f} token acc {acc:.3f} entity F1 {f1:.3f}")

    assert total < first / 5, (first, total)
    assert acc > 0.97 and acc > acc0 + 0.3, (acc0, acc)
    assert f1 > 0.9, f1
    # I-X never follows O in the data: the CRF learned to score O -> I-X below B-X -> I-X.
    trans = model.crf.transitions.detach()
    for kind in ("PER", "LOC"):
        inside = TAGS.index(f"I-{kind}")
        assert trans[TAGS.index("O"), inside] < trans[TAGS.index(f"B-{kind}"), inside], trans
    with torch.no_grad():
        brute_force_check(model.crf)


if __name__ == "__main__":
    main()
