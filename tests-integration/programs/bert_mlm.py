"""A tiny BERT-style masked language model on a synthetic corpus of counting sequences.

In the style of minimal BERT pretraining scripts: token + position + segment
embeddings, a hand-written encoder block over nn.MultiheadAttention with a
key_padding_mask, GELU(approximate="tanh"), the 80/10/10 masking recipe built from
torch.bernoulli and torch.full, labels of -100 for unmasked positions,
an MLM head whose decoder weight is tied to the token embedding, a LambdaLR
linear warmup/decay, and cross_entropy's default ignore_index.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

PAD, CLS, SEP, MASK = 0, 1, 2, 3
N_SPECIAL = 4
VOCAB = N_SPECIAL + 12
HALF = 6  # each sequence is [CLS] a [SEP] a [SEP], a counting up (mod 12) from a random start


def make_batch(n, generator):
    start = torch.randint(0, VOCAB - N_SPECIAL, (n, 1), generator=generator)
    a = (start + torch.arange(HALF)) % (VOCAB - N_SPECIAL) + N_SPECIAL
    cls = torch.full((n, 1), CLS, dtype=torch.long)
    sep = torch.full((n, 1), SEP, dtype=torch.long)
    ids = torch.cat([cls, a, sep, a, sep], dim=1)
    segments = torch.cat(
        [torch.zeros(n, HALF + 2, dtype=torch.long), torch.ones(n, HALF + 1, dtype=torch.long)], 1
    )
    # Randomly drop the tail of some sequences to exercise padding.
    lengths = torch.randint(2 * HALF, 2 * HALF + 4, (n,), generator=generator)
    positions = torch.arange(ids.size(1)).unsqueeze(0)
    pad_mask = positions >= lengths.unsqueeze(1)
    ids = ids.masked_fill(pad_mask, PAD)
    return ids, segments, pad_mask


def mask_tokens(inputs, pad_mask, mlm_probability=0.15, generator=None):
    labels = inputs.clone()
    probability_matrix = torch.full(labels.shape, mlm_probability)
    special = (inputs < N_SPECIAL) | pad_mask
    probability_matrix.masked_fill_(special, value=0.0)
    masked_indices = torch.bernoulli(probability_matrix, generator=generator).bool()
    labels[~masked_indices] = -100
    inputs = inputs.clone()
    indices_replaced = (
        torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked_indices
    )
    inputs[indices_replaced] = MASK
    indices_random = (
        torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool()
        & masked_indices
        & ~indices_replaced
    )
    random_words = torch.randint(
        N_SPECIAL, VOCAB, labels.shape, dtype=torch.long, generator=generator
    )
    inputs[indices_random] = random_words[indices_random]
    return inputs, labels


class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * d_model, d_model),
        )
        self.ln2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_padding_mask):
        a, _ = self.attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        x = self.ln1(x + self.drop(a))
        return self.ln2(x + self.drop(self.ff(x)))


class TinyBert(nn.Module):
    def __init__(self, d_model=32, n_heads=4, n_layers=2, max_len=32):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d_model)
        self.seg = nn.Embedding(2, d_model)
        self.emb_ln = nn.LayerNorm(d_model)
        self.blocks = nn.ModuleList([EncoderBlock(d_model, n_heads) for _ in range(n_layers)])
        self.mlm_transform = nn.Sequential(
            nn.Linear(d_model, d_model), nn.GELU(), nn.LayerNorm(d_model)
        )
        self.decoder = nn.Linear(d_model, VOCAB, bias=False)
        self.bias = nn.Parameter(torch.zeros(VOCAB))
        self.decoder.weight = self.tok.weight  # weight tying
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.data.zero_()
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()

    def forward(self, ids, segments, pad_mask):
        positions = torch.arange(ids.size(1), device=ids.device).unsqueeze(0).expand_as(ids)
        x = self.emb_ln(self.tok(ids) + self.pos(positions) + self.seg(segments))
        for block in self.blocks:
            x = block(x, pad_mask)
        return self.decoder(self.mlm_transform(x)) + self.bias


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = TinyBert()
    assert model.decoder.weight is model.tok.weight
    # Tied weights are counted once.
    n_params = sum(p.numel() for p in model.parameters())
    assert len(list(model.parameters())) == len({id(p) for p in model.parameters()})
    print(f"{n_params} parameters")

    total_steps, warmup_steps = 150, 15
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)

    def lr_lambda(current_step):
        if current_step < warmup_steps:
            return float(current_step) / float(max(1, warmup_steps))
        return max(
            0.0, float(total_steps - current_step) / float(max(1, total_steps - warmup_steps))
        )

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    assert optimizer.param_groups[0]["lr"] == 0.0

    eval_ids, eval_segs, eval_pad = make_batch(256, g)
    eval_inputs, eval_labels = mask_tokens(eval_ids, eval_pad, generator=g)
    assert (eval_labels[eval_pad] == -100).all()
    assert (eval_labels[eval_ids < N_SPECIAL] == -100).all()
    n_masked = (eval_labels != -100).sum().item()
    n_candidates = ((eval_ids >= N_SPECIAL) & ~eval_pad).sum().item()
    assert 0.08 < n_masked / n_candidates < 0.22, n_masked / n_candidates

    def evaluate():
        model.eval()
        with torch.no_grad():
            logits = model(eval_inputs, eval_segs, eval_pad)
            loss = F.cross_entropy(logits.view(-1, VOCAB), eval_labels.view(-1))
            picked = eval_labels != -100
            acc = (logits.argmax(-1)[picked] == eval_labels[picked]).float().mean()
        return loss.item(), acc.item()

    loss0, acc0 = evaluate()
    print(f"initial: loss {loss0:.3f} acc {acc0:.3f}")
    for step in range(total_steps):
        model.train()
        ids, segs, pad = make_batch(32, g)
        inputs, labels = mask_tokens(ids, pad, generator=g)
        logits = model(inputs, segs, pad)
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 30 == 0 or step == total_steps - 1:
            print(
                f"step {step}: train loss {loss.item():.3f} lr {scheduler.get_last_lr()[0]:.2e}"
                f"  eval loss/accuracy {evaluate()}"
            )
    loss1, acc1 = evaluate()
    assert loss1 < 0.5 * loss0, (loss0, loss1)
    assert acc1 > 0.6, acc1
    assert scheduler.get_last_lr()[0] == 0.0

    # Padding positions do not influence the other positions' outputs.
    model.eval()
    ids, segs, pad = eval_ids[:1], eval_segs[:1], eval_pad[:1]
    with torch.no_grad():
        base = model(ids, segs, pad)
        changed = ids.masked_fill(pad, VOCAB - 1)
        other = model(changed, segs, pad)
    keep = ~pad[0]
    assert torch.allclose(base[0, keep], other[0, keep], atol=1e-5)


if __name__ == "__main__":
    main()
