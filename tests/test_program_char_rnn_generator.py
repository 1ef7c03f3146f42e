"""Program pattern: PyTorch's "generating names with a character-level RNN" tutorial, run whole.
A conditional RNN (category, letter and hidden state concatenated; i2h, i2o, o2o, dropout,
LogSoftmax), input and target tensors built with ``LongTensor`` and ``unsqueeze_(-1)``, the loss
summed over the name into ``loss = torch.Tensor([0])`` with ``+=``, the hand-written SGD step through
``.data`` (``p.data.add_(p.grad.data, alpha=-learning_rate)``, word for word), ``loss.item() /
input_line_tensor.size(0)``; then sampling: greedy (``topk(1)``, the 0-d index used as
``all_letters[topi]``) and by temperature (softmax, cumulative sums, and uniform draws given to both
libraries, since their random generators differ).  The dropout layer is kept, in eval mode, so that
both libraries draw nothing.

Compared in float64 and float32: the per-step losses, output log-probabilities, every gradient,
the parameters after every step (values and dtypes), and the sampled names."""
import numpy
import pytest

import minigrad
from program_parity import TOLERANCES, close, same_gradients, same_parameters, twins

torch = pytest.importorskip("torch")

ALL_LETTERS = "abcdefghijkl"
N_LETTERS = len(ALL_LETTERS) + 1          # plus EOS
CATEGORIES = ["one", "two"]
N_HIDDEN, MAX_LENGTH = 12, 8
NAMES = [("abcd", 0), ("kilg", 1), ("feed", 0), ("jack", 1), ("bead", 0)]


def generator(L):
    class RNN(L.nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = L.nn.Linear(len(CATEGORIES) + input_size + hidden_size, hidden_size)
            self.i2o = L.nn.Linear(len(CATEGORIES) + input_size + hidden_size, output_size)
            self.o2o = L.nn.Linear(hidden_size + output_size, output_size)
            self.dropout = L.nn.Dropout(0.1)
            self.softmax = L.nn.LogSoftmax(dim=1)

        def forward(self, category, input, hidden):
            input_combined = L.cat((category, input, hidden), 1)
            hidden = self.i2h(input_combined)
            output = self.i2o(input_combined)
            output_combined = L.cat((hidden, output), 1)
            output = self.o2o(output_combined)
            output = self.dropout(output)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return L.zeros(1, self.hidden_size, dtype=self.i2h.weight.dtype)

    return RNN(N_LETTERS, N_HIDDEN, N_LETTERS)


def category_tensor(L, category_i, dtype):
    tensor = L.zeros(1, len(CATEGORIES), dtype=dtype)
    tensor[0][category_i] = 1
    return tensor


def input_tensor(L, line, dtype):
    tensor = L.zeros(len(line), 1, N_LETTERS, dtype=dtype)
    for li in range(len(line)):
        tensor[li][0][ALL_LETTERS.find(line[li])] = 1
    return tensor


def target_tensor(L, line):
    letter_indexes = [ALL_LETTERS.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(N_LETTERS - 1)  # EOS
    return L.LongTensor(letter_indexes)


def train(L, rnn, criterion, category, input_line_tensor, target_line_tensor, learning_rate):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()
    rnn.zero_grad()
    loss = L.Tensor([0])                     # the tutorial's float accumulator
    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])
        loss += l
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss, loss.item() / input_line_tensor.size(0)


def sample(L, rnn, category_i, start_letter, dtype, uniforms=None, temperature=0.8):
    with L.no_grad():
        category = category_tensor(L, category_i, dtype)
        input = input_tensor(L, start_letter, dtype)
        hidden = rnn.initHidden()
        output_name = start_letter
        for i in range(MAX_LENGTH):
            output, hidden = rnn(category, input[0], hidden)
            if uniforms is None:
                topv, topi = output.topk(1)
                topi = topi[0][0]
            else:                             # a draw from softmax(output / T), by the inverse of its CDF
                probabilities = (output / temperature).softmax(dim=1)
                topi = int((probabilities.cumsum(dim=1) < float(uniforms[i])).sum())
                topi = min(topi, N_LETTERS - 1)
            if topi == N_LETTERS - 1:
                break
            letter = ALL_LETTERS[topi]
            output_name += letter
            input = input_tensor(L, letter, dtype)
    return output_name


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_char_rnn_generator_trains_and_samples_as_in_torch(dtype):
    ours, theirs = twins(generator, torch, seed=5, dtype=dtype)
    ours.eval()
    theirs.eval()
    tolerance = TOLERANCES[dtype]
    criterion = {minigrad: minigrad.nn.NLLLoss(), torch: torch.nn.NLLLoss()}
    for step, (name, category_i) in enumerate(NAMES * 2):
        results = []
        for L, rnn in ((minigrad, ours), (torch, theirs)):
            d = getattr(L, dtype)
            results.append(train(L, rnn, criterion[L], category_tensor(L, category_i, d), input_tensor(L, name, d),
                                 target_tensor(L, name), learning_rate=0.1))
        (our_output, our_loss, our_mean), (their_output, their_loss, their_mean) = results
        assert our_loss.dtype == minigrad.float32 and str(their_loss.dtype) == "torch.float32"   # Tensor([0]) keeps it
        assert our_output.dtype == getattr(minigrad, dtype) and our_loss.shape == (1,)
        close(our_output, their_output, f"log-probabilities at step {step}", tolerance)
        close(our_loss, their_loss, f"summed loss at step {step}", TOLERANCES["float32"])
        assert abs(our_mean - their_mean) <= TOLERANCES["float32"] * max(1.0, abs(their_mean))
        same_gradients(ours, theirs, tolerance)
        same_parameters(ours, theirs, f"after step {step + 1}", tolerance)
    uniforms = numpy.random.default_rng(0).uniform(0.05, 0.95, MAX_LENGTH)
    for category_i, start in [(0, "a"), (1, "k"), (0, "f"), (1, "b")]:
        greedy = [sample(L, rnn, category_i, start, getattr(L, dtype)) for L, rnn in ((minigrad, ours), (torch, theirs))]
        drawn = [sample(L, rnn, category_i, start, getattr(L, dtype), uniforms)
                 for L, rnn in ((minigrad, ours), (torch, theirs))]
        assert greedy[0] == greedy[1] and drawn[0] == drawn[1], (greedy, drawn)
        assert len(greedy[0]) >= 1 and set(greedy[0] + drawn[0]) <= set(ALL_LETTERS)
