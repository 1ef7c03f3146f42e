"""``torch.nn.utils.rnn``: padding a batch of sequences of different lengths.

minigrad's nn.RNN, nn.LSTM and nn.GRU take the true lengths directly
(``rnn(x, lengths=lengths)``), so there is no PackedSequence: pad with
``pad_sequence`` and pass the lengths.
"""
from ... import functional as F
from ...creation import stack


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors (L_i, *) into (L_max, B, *) (or (B, L_max, *) with batch_first), padding with
    ``padding_value`` after each sequence (before it with padding_side="left"); differentiable."""
    if not sequences:
        raise ValueError("pad_sequence: expected at least one sequence")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        pad = [0, 0] * (s.ndim - 1) + ([0, missing] if padding_side == "right" else [missing, 0])
        padded.append(F.pad(s, pad, value=padding_value) if missing else s)
    return stack(padded, dim=0 if batch_first else 1)


def __getattr__(name):
    if name in ("pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "PackedSequence"):
        raise AttributeError(f"minigrad.nn.utils.rnn.{name} is not in minigrad: there are no packed sequences; "
                             "pad with pad_sequence and pass lengths= to nn.RNN / nn.LSTM / nn.GRU")
    raise AttributeError(f"module 'minigrad.nn.utils.rnn' has no attribute '{name}'")
