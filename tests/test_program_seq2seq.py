"""Program pattern: the PyTorch seq2seq translation tutorial (a GRU encoder over embeddings, run
a word at a time with its outputs written into a buffer by index; a decoder with Bahdanau
attention over that buffer; log_softmax + NLLLoss; teacher forcing, or greedy decoding with
topk).  Written here from PyTorch's API, run in minigrad and in torch from the same weights:
log-probabilities, every gradient and 3 optimizer steps agree in float64."""
import pytest

from program_parity import close, train_side_by_side, twins

torch = pytest.importorskip("torch")

SOURCE_WORDS, TARGET_WORDS, HIDDEN, MAX_LENGTH, SOS = 9, 8, 5, 6, 0


def translator(L):
    F = L.nn.functional

    class Encoder(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = L.nn.Embedding(SOURCE_WORDS, HIDDEN)
            self.gru = L.nn.GRU(HIDDEN, HIDDEN, batch_first=True)

        def forward(self, word, hidden):                       # one word (1,), hidden (1, 1, H)
            embedded = self.embedding(word).view(1, 1, -1)      # (N=1, T=1, H)
            return self.gru(embedded, hidden)

    class BahdanauAttention(L.nn.Module):
        """score(query, key) = v^T tanh(W query + U key)."""

        def __init__(self):
            super().__init__()
            self.Wa, self.Ua, self.Va = L.nn.Linear(HIDDEN, HIDDEN), L.nn.Linear(HIDDEN, HIDDEN), L.nn.Linear(HIDDEN, 1)

        def forward(self, query, keys):                         # (N, 1, H), (N, S, H)
            scores = self.Va(L.tanh(self.Wa(query) + self.Ua(keys))).squeeze(2).unsqueeze(1)   # (N, 1, S)
            weights = F.softmax(scores, dim=-1)
            return L.bmm(weights, keys), weights                # (N, 1, H)

    class Decoder(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = L.nn.Embedding(TARGET_WORDS, HIDDEN)
            self.attention = BahdanauAttention()
            self.gru = L.nn.GRU(2 * HIDDEN, HIDDEN, batch_first=True)
            self.out = L.nn.Linear(HIDDEN, TARGET_WORDS)
            self.dropout = L.nn.Dropout(0.0)

        def step(self, word, hidden, encoder_outputs):          # word (N, 1)
            embedded = self.dropout(self.embedding(word))       # (N, 1, H)
            context, weights = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
            output, hidden = self.gru(L.cat((embedded, context), dim=2), hidden)
            return self.out(output), hidden, weights

        def forward(self, encoder_outputs, hidden, targets=None):
            word = L.empty(1, 1, dtype=L.long).fill_(SOS)
            outputs = []
            for i in range(MAX_LENGTH):
                output, hidden, _ = self.step(word, hidden, encoder_outputs)
                outputs.append(output)
                if targets is not None:
                    word = targets[:, i].unsqueeze(1)            # teacher forcing
                else:
                    _, top = output.data.topk(1)            # the tutorial's spelling: .data is a Tensor
                    word = top.squeeze(-1).detach()             # greedy: its own guess
            return F.log_softmax(L.cat(outputs, dim=1), dim=-1), hidden

    class Translator(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = Encoder(), Decoder()

        def forward(self, source, targets=None):
            hidden = L.zeros(1, 1, HIDDEN, dtype=L.float64)
            encoder_outputs = L.zeros(MAX_LENGTH, HIDDEN, dtype=L.float64)
            for i in range(source.size(0)):
                output, hidden = self.encoder(source[i], hidden)
                encoder_outputs[i] = output[0, 0]               # index assignment: the gradient must flow
            return self.decoder(encoder_outputs.unsqueeze(0), hidden, targets)

    return Translator()


def pair_of_sentences(library, step):
    generator = torch.Generator().manual_seed(step)
    source = torch.randint(1, SOURCE_WORDS, (4, 1), generator=generator)
    target = torch.randint(1, TARGET_WORDS, (1, MAX_LENGTH), generator=generator)
    return library.tensor(source.numpy()), library.tensor(target.numpy())


@pytest.mark.parametrize("teacher_forcing", [True, False])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_translator_matches_torch(teacher_forcing, optimizer):
    ours, theirs = twins(translator, torch)
    import minigrad
    criterion = {id(ours): minigrad.nn.NLLLoss(), id(theirs): torch.nn.NLLLoss()}

    def loss_of(L, model, step):
        source, target = pair_of_sentences(L, step)
        log_probs, _ = model(source, target if teacher_forcing else None)
        return criterion[id(model)](log_probs.squeeze(0), target.squeeze(0))

    source, target = pair_of_sentences(torch, 0)
    log_probs, _ = ours(minigrad.tensor(source.numpy()), minigrad.tensor(target.numpy()))
    close(log_probs, theirs(source, target)[0], "log-probabilities")
    optimizers = (getattr(minigrad.optim, optimizer)(ours.parameters(), lr=0.05),
                  getattr(torch.optim, optimizer)(theirs.parameters(), lr=0.05))
    train_side_by_side(ours, theirs, optimizers, loss_of)
    assert abs(ours.encoder.embedding.weight.grad).sum() > 0    # the encoder is trained through the buffer
