"""A small GPT with a key/value cache for generation, and top-k / nucleus sampling.

In the style of inference code for decoder-only transformers: attention blocks that
take and return past (key, value) tensors, concatenated along the time axis with
torch.cat; F.scaled_dot_product_attention with is_causal=True for the prompt and with
no mask for single-token steps; learned position embeddings offset by the cache
length; weight tying between the token embedding and the output head; top-k filtering
with torch.topk and top-p (nucleus) filtering with torch.sort, cumsum and scatter back
to vocabulary order; torch.multinomial with a seeded torch.Generator. The model learns
sequences from a small deterministic grammar. Checks that cached decoding reproduces
the logits of full re-computation, the filters against their definitions, and that
sampled continuations follow the grammar.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

VOCAB, BLOCK, D_MODEL, N_HEAD, N_LAYER = 16, 32, 48, 4, 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x, past=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(D_MODEL, dim=2)
        q, k, v = (z.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            past_k, past_v = past
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        if past is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # New queries (T of them) see the whole cache and the causal part of themselves.
            S = k.size(2)
            mask = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), (k, v)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.mlp = nn.Sequential(
            nn.Linear(D_MODEL, 4 * D_MODEL),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * D_MODEL, D_MODEL),
        )

    def forward(self, x, past=None):
        a, present = self.attn(self.ln1(x), past)
        x = x + a
        return x + self.mlp(self.ln2(x)), present


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D_MODEL)
        self.wpe = nn.Embedding(BLOCK, D_MODEL)
        self.blocks = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * N_LAYER))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, past_key_values=None):
        B, T = idx.shape
        start = 0 if past_key_values is None else past_key_values[0][0].size(2)
        pos = torch.arange(start, start + T, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        presents = []
        for i, block in enumerate(self.blocks):
            x, present = block(x, None if past_key_values is None else past_key_values[i])
            presents.append(present)
        return self.lm_head(self.ln_f(x)), presents


def top_k_top_p_filter(logits, top_k=0, top_p=1.0):
    if top_k > 0:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
        cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        remove = cum > top_p
        remove[..., 1:] = remove[..., :-1].clone()  # keep the token that crosses top_p
        remove[..., 0] = False
        remove = remove.scatter(-1, sorted_idx, remove)
        logits = logits.masked_fill(remove, float("-inf"))
    return logits


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=0, top_p=1.0, generator=None):
    logits, past = model(idx)
    for _ in range(max_new_tokens):
        logits = top_k_top_p_filter(logits[:, -1, :] / temperature, top_k, top_p)
        probs = F.softmax(logits, dim=-1)
        next_token = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat([idx, next_token], dim=1)
        logits, past = model(next_token, past_key_values=past)
    return idx


def make_sequence(rng_gen):
    """a b c ... runs: start anywhere, step by 1 or 3 (the step is the first token's parity)."""
    start = int(torch.randint(2, VOCAB, (1,), generator=rng_gen))
    step = 1 if start % 2 == 0 else 3
    seq = [0, start]  # 0 is the BOS token; 1 is unused
    while len(seq) < BLOCK + 1:
        seq.append(2 + (seq[-1] - 2 + step) % (VOCAB - 2))
    return seq


def follows_grammar(seq):
    step = 1 if seq[1] % 2 == 0 else 3
    return all(b == 2 + (a - 2 + step) % (VOCAB - 2) for a, b in zip(seq[1:], seq[2:]))


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = torch.tensor([make_sequence(g) for _ in range(512)])

    model = GPT()
    assert model.lm_head.weight is model.wte.weight
    n_params = sum(p.numel() for p in model.parameters())
    print(f"parameters: {n_params}")

    # The filters: top-k keeps the k largest; top-p keeps the smallest prefix of mass >= p.
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.0, 2.5]])
    assert torch.isinf(top_k_top_p_filter(logits, top_k=2)).tolist() == [
        [True, False, True, True, False]
    ]
    probs = F.softmax(logits, dim=-1)[0]  # 3.0: 0.48, 2.5: 0.29, 2.0: 0.18, ...
    kept = ~torch.isinf(top_k_top_p_filter(logits, top_p=0.7))
    assert kept.tolist() == [[False, True, False, False, True]], (kept, probs)

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    for step in range(150):
        batch = data[torch.randint(0, len(data), (32,))]
        logits, _ = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    assert loss.item() < 0.3, loss.item()
    model.eval()

    # Incremental decoding with the cache gives the logits of recomputing everything.
    with torch.no_grad():
        prompt = data[:4, :5]
        full_logits, _ = model(data[:4, :12])
        logits, past = model(prompt)
        steps = [logits[:, -1]]
        for t in range(5, 12):
            logits, past = model(data[:4, t : t + 1], past_key_values=past)
            steps.append(logits[:, -1])
        assert past[0][0].shape == (4, N_HEAD, 12, D_MODEL // N_HEAD)
        cached = torch.stack(steps, dim=1)
        assert torch.allclose(cached, full_logits[:, 4:12], atol=1e-4), (
            (cached - full_logits[:, 4:12]).abs().max()
        )
        # Two new tokens at once against a cache: the mask offsets the diagonal.
        _, past = model(prompt)
        two, _ = model(data[:4, 5:7], past_key_values=past)
        assert torch.allclose(two, full_logits[:, 5:7], atol=1e-4)

    gen = torch.Generator().manual_seed(1)
    prompts = torch.tensor([[0, 4], [0, 7], [0, 10], [0, 13]])
    out = generate(model, prompts, 20, temperature=0.8, top_k=5, top_p=0.9, generator=gen)
    assert out.shape == (4, 22)
    good = sum(follows_grammar(seq) for seq in out.tolist())
    print("samples:", out.tolist())
    assert good >= 3, good
    # Sampling is reproducible with the same generator seed.
    again = generate(
        model,
        prompts,
        20,
        temperature=0.8,
        top_k=5,
        top_p=0.9,
        generator=torch.Generator().manual_seed(1),
    )
    assert torch.equal(out, again)


if __name__ == "__main__":
    main()
