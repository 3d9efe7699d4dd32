"""A bidirectional LSTM classifies variable-length token sequences, packed the usual way.

A sequence is positive when it contains the token 7. Exercises Embedding with
padding_idx, pad_sequence, pack_padded_sequence(enforce_sorted=False) into a
2-layer bidirectional LSTM, the final forward/backward hidden states joined with
torch.cat((h_n[-2], h_n[-1])), pad_packed_sequence for a masked mean over time,
BatchNorm1d in the head, BCEWithLogitsLoss, ReduceLROnPlateau driven by the
validation loss, torch.inference_mode evaluation, and sigmoid > 0.5 accuracy.
"""

import random

import flambeau as torch
import flambeau.nn as nn
from flambeau import optim
from flambeau.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD, VOCAB, KEY = 0, 12, 7


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(
            embed_dim, hidden_dim, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1
        )
        self.norm = nn.BatchNorm1d(4 * hidden_dim)
        self.fc = nn.Linear(4 * hidden_dim, 1)

    def forward(self, text, lengths):
        embedded = self.embedding(text)
        packed = pack_padded_sequence(
            embedded, lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        packed_output, (h_n, c_n) = self.lstm(packed)
        output, output_lengths = pad_packed_sequence(packed_output, batch_first=True)
        mask = (torch.arange(output.size(1))[None, :] < output_lengths[:, None]).unsqueeze(-1)
        mean_pooled = (output * mask).sum(dim=1) / output_lengths.unsqueeze(1).to(output.dtype)
        last = torch.cat((h_n[-2, :, :], h_n[-1, :, :]), dim=1)
        features = self.norm(torch.cat([last, mean_pooled], dim=1))
        return self.fc(features).squeeze(1)


def make_examples(rng, n):
    examples = []
    for _ in range(n):
        length = rng.randint(2, 12)
        tokens = [rng.choice([t for t in range(1, VOCAB) if t != KEY]) for _ in range(length)]
        label = rng.random() < 0.5
        if label:
            tokens[rng.randrange(length)] = KEY
        examples.append((tokens, float(label)))
    return examples


def collate(examples):
    texts = [torch.tensor(tokens, dtype=torch.long) for tokens, _ in examples]
    lengths = torch.tensor([len(t) for t in texts])
    labels = torch.tensor([label for _, label in examples])
    return pad_sequence(texts, batch_first=True, padding_value=PAD), lengths, labels


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set, val_set = make_examples(rng, 640), make_examples(rng, 200)

    model = TextClassifier(VOCAB, 16, 24).to(device)
    assert model.embedding.weight[PAD].abs().sum().item() == 0
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(model.parameters(), lr=5e-3)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0)

    def evaluate():
        model.eval()
        with torch.inference_mode():
            text, lengths, labels = collate(val_set)
            text, labels = text.to(device), labels.to(device)
            logits = model(text, lengths)
            loss = criterion(logits, labels).item()
            preds = (torch.sigmoid(logits) > 0.5).float()
            accuracy = (preds == labels).float().mean().item()
        return loss, accuracy

    first_loss, _ = evaluate()
    for epoch in range(6):
        model.train()
        rng.shuffle(train_set)
        for i in range(0, len(train_set), 32):
            text, lengths, labels = collate(train_set[i : i + 32])
            text, labels = text.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(text, lengths), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
        val_loss, accuracy = evaluate()
        scheduler.step(val_loss)
        lr = optimizer.param_groups[0]["lr"]
        print(f"epoch {epoch}: val loss {val_loss:.4f} accuracy {accuracy:.3f} lr {lr:g}")
    assert val_loss < first_loss / 3, (first_loss, val_loss)
    assert accuracy > 0.95, accuracy
    # The padding row of the embedding never receives a gradient.
    assert model.embedding.weight[PAD].abs().sum().item() == 0


if __name__ == "__main__":
    main()
