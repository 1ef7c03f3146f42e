"""Program pattern: pytorch/examples' "time sequence prediction", run whole.
Two stacked LSTMCells and a Linear predict the next value of sine waves, one time step at a time
(``input.split(1, dim=1)``, states ``zeros(N, H, dtype=torch.double)``), then keep going on their
own predictions for ``future`` steps; trained with ``optim.LBFGS(lr=0.8)`` and
``optimizer.step(closure)``, the closure zeroing gradients, computing MSELoss and calling backward;
the test loss and the extrapolation under ``no_grad``.

Written here from PyTorch's API, smaller than the example (6 waves of 24 points, hidden 10, two
LBFGS steps of 8 iterations); the same code runs with ``L`` minigrad and torch from the same weights, in float64.
Compared after every step: the loss the closure returned first, every parameter, then the
predictions and the test loss."""
import numpy
import pytest

from program_parity import close, same_parameters, twins

torch = pytest.importorskip("torch")

T, LENGTH, WAVES, HIDDEN, FUTURE = 20, 24, 6, 10, 10
TOLERANCE = 1e-8


def sequence_model(L):
    class Sequence(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = L.nn.LSTMCell(1, HIDDEN)
            self.lstm2 = L.nn.LSTMCell(HIDDEN, HIDDEN)
            self.linear = L.nn.Linear(HIDDEN, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = L.zeros(input.size(0), HIDDEN, dtype=L.double)
            c_t = L.zeros(input.size(0), HIDDEN, dtype=L.double)
            h_t2 = L.zeros(input.size(0), HIDDEN, dtype=L.double)
            c_t2 = L.zeros(input.size(0), HIDDEN, dtype=L.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):          # keep predicting from its own output
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return L.cat(outputs, dim=1)

    return Sequence()


def sine_waves():
    rng = numpy.random.default_rng(2)
    x = numpy.arange(LENGTH) + rng.integers(-4 * T, 4 * T, WAVES).reshape(WAVES, 1)
    return numpy.sin(x / 1.0 / T)


def run(L, model, data, steps=2):
    """The example's main loop; returns the losses and predictions it printed and plotted."""
    # the example writes torch.from_numpy (a CPU tensor); L.tensor puts the data on the default device, where
    # the model is, so that CI's strict device runs this program too
    input, target = L.tensor(data[2:, :-1]), L.tensor(data[2:, 1:])
    test_input, test_target = L.tensor(data[:2, :-1]), L.tensor(data[:2, 1:])
    criterion = L.nn.MSELoss()
    optimizer = L.optim.LBFGS(model.parameters(), lr=0.8, max_iter=8)
    record = {"loss": [], "test loss": [], "prediction": []}
    for step in range(steps):
        def closure():
            optimizer.zero_grad()
            out = model(input)
            loss = criterion(out, target)
            loss.backward()
            return loss
        record["loss"].append(optimizer.step(closure).item())
        with L.no_grad():
            pred = model(test_input, future=FUTURE)
            record["test loss"].append(criterion(pred[:, :-FUTURE], test_target).item())
            record["prediction"].append(pred.detach().cpu().numpy())
        yield record


def test_sine_wave_predictor_trained_with_lbfgs_matches_torch():
    ours, theirs = twins(sequence_model, torch)
    data = sine_waves()
    for step, (mine, torchs) in enumerate(zip(run(__import__("minigrad"), ours, data), run(torch, theirs, data))):
        close(numpy.array(mine["loss"]), numpy.array(torchs["loss"]), f"step {step}: loss", TOLERANCE)
        same_parameters(ours, theirs, f"after LBFGS step {step}", TOLERANCE)
        close(mine["prediction"][-1], torchs["prediction"][-1], f"step {step}: prediction", TOLERANCE)
        close(numpy.array(mine["test loss"]), numpy.array(torchs["test loss"]), f"step {step}: test loss", TOLERANCE)
    assert mine["loss"][-1] != mine["loss"][0]            # the steps moved the weights
