"""The training loss of a translation model (Seq2Seq, TransformerTranslator): teacher forcing."""
from .. import functional as F
from ..text import PAD_IDX


def teacher_forcing_loss(model, src, tgt, pad=PAD_IDX):
    """Cross entropy of ``model(src, tgt[:, :-1])`` against ``tgt[:, 1:]``, padding skipped.

    tgt: (N, T + 1) ids <bos> y_1 ... y_T <eos> (then <pad>).  The decoder reads the true previous
    token y_{t-1} at step t and is scored on y_t: all T positions in one pass (lesson 8, section 2).
    """
    logits = model(src, tgt[:, :-1])                                                # (N, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1), ignore_index=pad)
