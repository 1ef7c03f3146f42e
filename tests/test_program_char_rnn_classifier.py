"""Program pattern: PyTorch's "classifying names with a character-level RNN" tutorial, run whole.
A hand-built RNN (Linear layers over cat(input, hidden), LogSoftmax), names as one-hot letter
tensors filled by index, NLLLoss, the hand-written SGD step ``p.data.add_(p.grad, alpha=-lr)``,
predictions with ``output.topk(1)`` / ``topk(3, 1, True)`` and ``.item()`` as list indices, and a
confusion matrix accumulated with ``confusion[i][j] += 1`` and normalised row by row under no_grad.

Written here from PyTorch's API; the same code runs with ``L`` minigrad and torch, from the same
weights, in float64 and float32.  Compared after every training step: the log-probabilities, the
loss, every gradient (values and dtype), every parameter after the step; then the predicted
categories (top 1 and top 3), the confusion matrix and its dtype."""
import pytest

import minigrad
from program_parity import TOLERANCES, close, same_gradients, same_parameters, twins

torch = pytest.importorskip("torch")

ALL_LETTERS = "abcdefghijklmn '"
N_LETTERS, N_HIDDEN = len(ALL_LETTERS), 10
CATEGORIES = ["first", "second", "third"]
NAMES = [("abba", 0), ("cade", 1), ("eff gh", 2), ("ink", 0), ("jam'l", 1), ("mna", 2), ("badge", 0), ("hin", 1)]


def classifier(L):
    class RNN(L.nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = L.nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = L.nn.Linear(input_size + hidden_size, output_size)
            self.softmax = L.nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = L.cat((input, hidden), 1)
            hidden = self.i2h(combined)
            output = self.softmax(self.i2o(combined))
            return output, hidden

        def initHidden(self):
            return L.zeros(1, self.hidden_size, dtype=self.i2h.weight.dtype)

    return RNN(N_LETTERS, N_HIDDEN, len(CATEGORIES))


def line_to_tensor(L, line, dtype):
    tensor = L.zeros(len(line), 1, N_LETTERS, dtype=dtype)
    for li, letter in enumerate(line):
        tensor[li][0][ALL_LETTERS.find(letter)] = 1
    return tensor


def train_step(L, rnn, criterion, category_tensor, line_tensor, learning_rate):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():                      # the tutorial's SGD step, through .data
        p.data.add_(p.grad, alpha=-learning_rate)
    return output, loss


def category_from_output(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return CATEGORIES[category_i], category_i


def evaluate(L, rnn, line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return output


def confusion_matrix(L, rnn, dtype):
    confusion = L.zeros(len(CATEGORIES), len(CATEGORIES))
    guesses, top3 = [], []
    with L.no_grad():
        for name, category_i in NAMES:
            output = evaluate(L, rnn, line_to_tensor(L, name, dtype))
            guess, guess_i = category_from_output(output)
            confusion[category_i][guess_i] += 1
            topv, topi = output.topk(3, 1, True)
            guesses.append(guess)
            top3.append([CATEGORIES[topi[0][k]] for k in range(3)])     # a 0-d integer tensor as a list index
    for i in range(len(CATEGORIES)):
        confusion[i] = confusion[i] / confusion[i].sum()
    return confusion, guesses, top3


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_char_rnn_classifier_trains_and_evaluates_as_in_torch(dtype):
    ours, theirs = twins(classifier, torch, seed=3, dtype=dtype)
    tolerance = TOLERANCES[dtype]
    criterion = {minigrad: minigrad.nn.NLLLoss(), torch: torch.nn.NLLLoss()}
    for step, (name, category_i) in enumerate(NAMES * 2):
        outputs = []
        for L, rnn in ((minigrad, ours), (torch, theirs)):
            category_tensor = L.tensor([category_i], dtype=L.long)
            output, loss = train_step(L, rnn, criterion[L], category_tensor,
                                      line_to_tensor(L, name, getattr(L, dtype)), learning_rate=0.05)
            outputs.append((output, loss))
        (our_output, our_loss), (their_output, their_loss) = outputs
        assert our_output.dtype == our_loss.dtype == getattr(minigrad, dtype)
        close(our_output, their_output, f"log-probabilities at step {step}", tolerance)
        close(our_loss, their_loss, f"loss at step {step}", tolerance)
        same_gradients(ours, theirs, tolerance)
        same_parameters(ours, theirs, f"after step {step + 1}", tolerance)
    our_confusion, our_guesses, our_top3 = confusion_matrix(minigrad, ours, getattr(minigrad, dtype))
    their_confusion, their_guesses, their_top3 = confusion_matrix(torch, theirs, getattr(torch, dtype))
    assert our_guesses == their_guesses and our_top3 == their_top3
    assert our_confusion.dtype == minigrad.float32                # L.zeros: the default dtype, in both
    close(our_confusion, their_confusion, "confusion matrix", 1e-6)
