"""A GRU encoder-decoder with Bahdanau attention, trained to "translate" token sequences.

Follows the PyTorch tutorial "NLP From Scratch: Translation with a Sequence to
Sequence Network and Attention": an EncoderRNN (Embedding, Dropout, batch_first
GRU), an AttnDecoderRNN with additive attention (Wa, Ua, Va; torch.bmm of the
softmaxed scores with the encoder outputs), greedy decoding that feeds back
topk(1) with .squeeze(-1).detach(), teacher forcing from the target tensor,
NLLLoss over log_softmax outputs, separate Adam optimizers for encoder and
decoder, a TensorDataset + RandomSampler + DataLoader, and attention maps that
sum to one.

The "language pair": the target is the source reversed, each token mapped to
another vocabulary.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim
from flambeau.utils.data import DataLoader, RandomSampler, TensorDataset

SOS_token, EOS_token = 0, 1
N_WORDS = 12  # per language, plus SOS and EOS
MAX_LENGTH = 8


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        return self.out(output), hidden, attn_weights


def make_pairs(n, generator):
    lengths = torch.randint(3, MAX_LENGTH, (n,), generator=generator)
    src = torch.zeros(n, MAX_LENGTH, dtype=torch.long)
    tgt = torch.zeros(n, MAX_LENGTH, dtype=torch.long)
    for i in range(n):
        L = lengths[i].item()
        words = torch.randint(2, N_WORDS + 2, (L - 1,), generator=generator)
        src[i, : L - 1] = words
        src[i, L - 1] = EOS_token
        translated = (words.flip(0) - 2 + 5) % N_WORDS + 2
        tgt[i, : L - 1] = translated
        tgt[i, L - 1] = EOS_token
    return src, tgt


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    input_ids, target_ids = make_pairs(1024, g)
    train_data = TensorDataset(input_ids, target_ids)
    train_dataloader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=32)
    hidden_size = 64
    encoder = EncoderRNN(N_WORDS + 2, hidden_size)
    decoder = AttnDecoderRNN(hidden_size, N_WORDS + 2)
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=3e-3)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=3e-3)
    criterion = nn.NLLLoss()

    test_src, test_tgt = make_pairs(128, g)

    def evaluate():
        encoder.eval()
        decoder.eval()
        with torch.no_grad():
            encoder_outputs, encoder_hidden = encoder(test_src)
            decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
            decoded = decoder_outputs.argmax(-1)
        # Token accuracy up to and including each target's EOS.
        valid = (
            torch.cumsum((test_tgt == EOS_token).long(), dim=1) - (test_tgt == EOS_token).long()
            == 0
        )
        acc = ((decoded == test_tgt) & valid).sum().item() / valid.sum().item()
        return acc, attentions

    acc0, _ = evaluate()
    print(f"initial token accuracy {acc0:.3f}")
    for epoch in range(1, 9):
        encoder.train()
        decoder.train()
        total_loss = 0
        for input_tensor, target_tensor in train_dataloader:
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(
                decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1)
            )
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        acc, attentions = evaluate()
        print(
            f"epoch {epoch}: loss {total_loss / len(train_dataloader):.4f}"
            f" greedy token accuracy {acc:.3f}"
        )
    assert acc > 0.8, acc
    assert attentions.shape == (128, MAX_LENGTH, MAX_LENGTH)
    assert torch.allclose(attentions.sum(-1), torch.ones(128, MAX_LENGTH), atol=1e-5)
    # Reversal: the first output word attends mostly to the last source word (before EOS).
    src_len = (test_src == EOS_token).long().argmax(1)
    first_attn = attentions[:, 0, :].argmax(-1)
    hits = (first_attn == src_len - 1).float().mean().item()
    print(f"first output word attends to the last source word in {hits:.0%} of sentences")


if __name__ == "__main__":
    main()
