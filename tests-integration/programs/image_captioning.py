"""Image captioning: a CNN encoder and an nn.TransformerDecoder over variable-length captions.

In the style of "CNN + transformer decoder" captioning tutorials: the encoder's feature
map flattened into a sequence of memory vectors (flatten(2).transpose(1, 2)) with a
learned 2-D position embedding; captions padded with pad_sequence; the decoder built
from nn.TransformerDecoderLayer(batch_first=True, norm_first=True) in an
nn.TransformerDecoder, with tgt_mask from nn.Transformer.generate_square_subsequent_mask,
tgt_is_causal=True and tgt_key_padding_mask; CrossEntropyLoss(ignore_index=PAD,
label_smoothing=0.1); greedy decoding until <eos>. The images hold one or two coloured
shapes; the captions say what and where ("red square left blue circle right").
Checks that padding does not change the real positions' outputs, that the causal mask
makes earlier positions independent of later tokens, and exact-match caption accuracy.
"""

import random

import flambeau as torch
import flambeau.nn as nn
from flambeau.nn.utils.rnn import pad_sequence

SIZE = 16
COLORS = {"red": (1.0, 0.1, 0.1), "green": (0.1, 1.0, 0.1), "blue": (0.1, 0.1, 1.0)}
SHAPES = ["square", "circle", "bar"]
WORDS = ["<pad>", "<bos>", "<eos>", "left", "right"] + list(COLORS) + SHAPES
STOI = {w: i for i, w in enumerate(WORDS)}
PAD, BOS, EOS = 0, 1, 2
D_MODEL = 64


def draw(image, shape, color, col0):
    r = torch.arange(SIZE).view(-1, 1).float()
    c = torch.arange(SIZE).view(1, -1).float()
    cx, cy = col0 + 3.5, 7.5
    if shape == "square":
        mask = ((r - cy).abs() <= 3) & ((c - cx).abs() <= 3)
    elif shape == "circle":
        mask = (r - cy) ** 2 + (c - cx) ** 2 <= 12
    else:
        mask = ((r - cy).abs() <= 5) & ((c - cx).abs() <= 1)
    image[:, mask] = torch.tensor(color).view(3, 1)


def make_example(rng):
    image = torch.zeros(3, SIZE, SIZE)
    words = []
    slots = ["left", "right"] if rng.random() < 0.5 else [rng.choice(["left", "right"])]
    for slot in slots:
        color, shape = rng.choice(list(COLORS)), rng.choice(SHAPES)
        draw(image, shape, COLORS[color], 0 if slot == "left" else 8)
        words += [color, shape, slot]
    tokens = [BOS] + [STOI[w] for w in words] + [EOS]
    return image, torch.tensor(tokens)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, D_MODEL, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.pos = nn.Parameter(torch.randn(1, (SIZE // 4) ** 2, D_MODEL) * 0.02)

    def forward(self, images):
        features = self.cnn(images)  # (B, D, 4, 4)
        return features.flatten(2).transpose(1, 2) + self.pos


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.embed = nn.Embedding(len(WORDS), D_MODEL, padding_idx=PAD)
        self.pos = nn.Embedding(16, D_MODEL)
        layer = nn.TransformerDecoderLayer(
            D_MODEL, nhead=4, dim_feedforward=128, dropout=0.1, batch_first=True, norm_first=True
        )
        self.decoder = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(D_MODEL))
        self.out = nn.Linear(D_MODEL, len(WORDS))

    def decode(self, memory, tokens):
        T = tokens.size(1)
        x = self.embed(tokens) + self.pos(torch.arange(T, device=tokens.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        h = self.decoder(
            x, memory, tgt_mask=mask, tgt_is_causal=True, tgt_key_padding_mask=tokens == PAD
        )
        return self.out(h)

    def forward(self, images, tokens):
        return self.decode(self.encoder(images), tokens)

    @torch.no_grad()
    def caption(self, images, max_len=9):
        memory = self.encoder(images)
        tokens = torch.full((images.size(0), 1), BOS, dtype=torch.long)
        done = torch.zeros(images.size(0), dtype=torch.bool)
        for _ in range(max_len):
            next_token = self.decode(memory, tokens)[:, -1].argmax(-1)
            next_token = torch.where(done, torch.full_like(next_token, PAD), next_token)
            tokens = torch.cat([tokens, next_token.unsqueeze(1)], dim=1)
            done |= next_token == EOS
            if done.all():
                break
        return tokens


def collate(examples):
    images = torch.stack([img for img, _ in examples])
    captions = pad_sequence([cap for _, cap in examples], batch_first=True, padding_value=PAD)
    return images, captions


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    train = [make_example(rng) for _ in range(1500)]
    test = [make_example(rng) for _ in range(200)]

    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert (
        mask.dtype == torch.float32
        and torch.isinf(mask).sum() == 6
        and (mask.diagonal() == 0).all()
    )

    model = Captioner()
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def exact_match():
        model.eval()
        images, captions = collate(test)
        generated = model.caption(images)
        model.train()
        correct = 0
        for gen, ref in zip(generated.tolist(), captions.tolist()):
            ref = [t for t in ref if t != PAD]
            gen = gen[: gen.index(EOS) + 1] if EOS in gen else gen
            correct += gen == ref
        return correct / len(test), generated

    for epoch in range(10):
        rng.shuffle(train)
        for i in range(0, len(train), 50):
            images, captions = collate(train[i : i + 50])
            logits = model(images, captions[:, :-1])
            loss = criterion(logits.reshape(-1, len(WORDS)), captions[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc, generated = exact_match()
        print(f"epoch {epoch}: loss {loss.item():.3f} exact-match {acc:.3f}")
    print("e.g.", " ".join(WORDS[t] for t in generated[0].tolist() if t != PAD))
    assert acc > 0.85, acc

    model.eval()
    with torch.no_grad():
        images, captions = collate(test[:8])
        memory = model.encoder(images)
        full = model.decode(memory, captions)
        # Extra padding at the end changes nothing at the real positions.
        padded = torch.cat([captions, torch.full((8, 3), PAD)], dim=1)
        assert torch.allclose(model.decode(memory, padded)[:, : captions.size(1)], full, atol=1e-5)
        # Causality: changing the last token leaves every earlier position unchanged.
        altered = captions.clone()
        altered[:, 3] = (altered[:, 3] + 1) % len(WORDS)
        out = model.decode(memory, altered)
        assert torch.allclose(out[:, :3], full[:, :3], atol=1e-5)
        assert not torch.allclose(out[:, 3], full[:, 3])


if __name__ == "__main__":
    main()
