"""Program pattern: the "upgraded sentiment analysis" tutorials' bidirectional LSTM classifier, run whole.
Token ids padded with ``pad_sequence``, an Embedding with ``padding_idx``, the batch packed with
``nn.utils.rnn.pack_padded_sequence(embedded, lengths.to('cpu'), batch_first=True,
enforce_sorted=False)`` (an unsorted batch), a 2-layer bidirectional LSTM, ``pad_packed_sequence``
on its output, the last layer's two final states ``cat((hidden[-2], hidden[-1]), dim=1)`` into a
Linear, BCEWithLogitsLoss, Adam; then accuracy with ``torch.round(torch.sigmoid(preds))`` under no_grad.

Written here from PyTorch's API; the same code runs with ``L`` minigrad and torch from the same
weights, in float64.  Compared at every step: the loss, every gradient, every parameter after the
step; then the unpacked output and its lengths, and the predictions."""
import numpy
import pytest

import minigrad
from program_parity import close, train_side_by_side, twins

torch = pytest.importorskip("torch")

VOCAB, EMBED, HIDDEN, PAD = 20, 6, 5, 0
REVIEWS = [[3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 2], [13, 14, 15, 16], [17, 18, 19, 3, 4], [5]]
LABELS = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]


def classifier(L):
    class BiLSTM(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = L.nn.Embedding(VOCAB, EMBED, padding_idx=PAD)
            self.rnn = L.nn.LSTM(EMBED, HIDDEN, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = L.nn.Linear(2 * HIDDEN, 1)

        def forward(self, text, text_lengths):
            embedded = self.embedding(text)
            packed_embedded = L.nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to("cpu"),
                                                                  batch_first=True, enforce_sorted=False)
            packed_output, (hidden, cell) = self.rnn(packed_embedded)
            output, output_lengths = L.nn.utils.rnn.pad_packed_sequence(packed_output, batch_first=True)
            hidden = L.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)
            return self.fc(hidden).squeeze(1), output, output_lengths

    return BiLSTM()


def batch(L):
    text = L.nn.utils.rnn.pad_sequence([L.tensor(r) for r in REVIEWS], batch_first=True, padding_value=PAD)
    return text, L.tensor([len(r) for r in REVIEWS]), L.tensor(LABELS, dtype=L.float64)


def test_bidirectional_lstm_on_packed_batches_matches_torch():
    ours, theirs = twins(classifier, torch)
    optimizers = (minigrad.optim.Adam(ours.parameters(), lr=0.05), torch.optim.Adam(theirs.parameters(), lr=0.05))

    def loss_of(L, model, step):
        text, lengths, labels = batch(L)
        predictions = model(text, lengths)[0]
        return L.nn.BCEWithLogitsLoss()(predictions, labels)

    train_side_by_side(ours, theirs, optimizers, loss_of, steps=4)
    outputs = {}
    for L, model in ((minigrad, ours), (torch, theirs)):
        model.eval()
        with L.no_grad():
            text, lengths, labels = batch(L)
            predictions, output, output_lengths = model(text, lengths)
            rounded = L.round(L.sigmoid(predictions))
            outputs[L.__name__] = (output, output_lengths, rounded, (rounded == labels).float().mean())
    for ours_value, their_value, what in zip(outputs["minigrad"], outputs["torch"],
                                             ("unpacked output", "lengths", "predictions", "accuracy")):
        close(ours_value, their_value, what)
    assert outputs["minigrad"][0].shape == (6, 6, 2 * HIDDEN)
    numpy.testing.assert_array_equal(outputs["minigrad"][1].numpy(), [3, 6, 2, 4, 5, 1])
