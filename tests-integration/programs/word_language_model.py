"""A word-level language model, trained the way the classic RNN/Transformer LM example does.

The corpus is synthetic: sentences drawn from a handful of fixed templates, so
the next word is predictable inside a sentence. Exercises Embedding, LSTM/GRU/
RNN picked with getattr(nn, ...), tied encoder/decoder weights, hidden-state
detaching between BPTT windows, clip_grad_norm_, a hand-written SGD update on
p.data, a TransformerEncoder with a square subsequent mask and a sinusoidal
positional encoding buffer, perplexity, and saving/loading the whole model
object with torch.save/torch.load(weights_only=False).
"""

import math
import os
import random
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F


class RNNModel(nn.Module):
    """Encoder, recurrent module, decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (
                weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid),
            )
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=500):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """A decoder-only LM built from nn.Transformer's encoder stack."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(
            d_model=ninp,
            nhead=nhead,
            dim_feedforward=nhid,
            num_encoder_layers=nlayers,
            num_decoder_layers=1,
        )
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(device)
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def make_corpus(rng, nsentences, vocab):
    templates = [
        "the cat sat on the mat",
        "a dog ran in the park",
        "the bird sang a song",
        "my friend read the book",
        "a fish swam in the lake",
    ]
    words = []
    for _ in range(nsentences):
        words.extend(rng.choice(templates).split() + ["<eos>"])
    for w in words:
        vocab.setdefault(w, len(vocab))
    return torch.tensor([vocab[w] for w in words], dtype=torch.long)


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def evaluate(model, data_source, ntokens, bptt, eval_batch_size, criterion):
    model.eval()
    total_loss = 0.0
    is_transformer = getattr(model, "model_type", None) == "Transformer"
    if not is_transformer:
        hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i, bptt)
            if is_transformer:
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train_epoch(model, train_data, ntokens, bptt, batch_size, lr, clip, criterion):
    model.train()
    is_transformer = getattr(model, "model_type", None) == "Transformer"
    if not is_transformer:
        hidden = model.init_hidden(batch_size)
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i, bptt)
        model.zero_grad()
        if is_transformer:
            output = model(data)
            output = output.view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)


def run(model_type, device, tmp):
    torch.manual_seed(1111)
    rng = random.Random(0)
    vocab = {}
    train_ids = make_corpus(rng, 400, vocab)
    val_ids = make_corpus(rng, 60, vocab)
    ntokens = len(vocab)
    bptt, batch_size, eval_batch_size = 12, 10, 5
    train_data = batchify(train_ids, batch_size, device)
    val_data = batchify(val_ids, eval_batch_size, device)

    if model_type == "Transformer":
        model = TransformerModel(ntokens, 32, 2, 64, 2, dropout=0.1).to(device)
        lr = 0.5
    else:
        model = RNNModel(model_type, ntokens, 32, 32, 2, dropout=0.2, tie_weights=True).to(device)
        assert model.decoder.weight is model.encoder.weight
        lr = 5.0
    criterion = nn.NLLLoss()

    first_val = evaluate(model, val_data, ntokens, bptt, eval_batch_size, criterion)
    best_val_loss = None
    save = os.path.join(tmp, f"model_{model_type}.pt")
    for _epoch in range(1, 7):
        train_epoch(model, train_data, ntokens, bptt, batch_size, lr, 0.25, criterion)
        val_loss = evaluate(model, val_data, ntokens, bptt, eval_batch_size, criterion)
        print(f"{model_type}: valid loss {val_loss:5.2f} | valid ppl {math.exp(val_loss):8.2f}")
        if not best_val_loss or val_loss < best_val_loss:
            with open(save, "wb") as f:
                torch.save(model, f)
            best_val_loss = val_loss
        else:
            lr /= 4.0

    # Inside a template the next word is certain; only the template choice is not.
    assert math.exp(best_val_loss) < math.exp(first_val) / 4, (first_val, best_val_loss)
    assert math.exp(best_val_loss) < 3.0, best_val_loss

    with open(save, "rb") as f:
        model = torch.load(f, weights_only=False)
        if model_type in ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]:
            model.rnn.flatten_parameters()
    reloaded = evaluate(model, val_data, ntokens, bptt, eval_batch_size, criterion)
    assert reloaded == best_val_loss, (reloaded, best_val_loss)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with tempfile.TemporaryDirectory() as tmp:
        for model_type in ["LSTM", "GRU", "RNN_TANH", "Transformer"]:
            run(model_type, device, tmp)


if __name__ == "__main__":
    main()
