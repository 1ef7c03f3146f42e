"""Ready-made models for the lessons, built only from minigrad.nn."""
from .transformer import CausalLM, TransformerClassifier, TransformerTranslator  # noqa: F401
from .rnn import RNNLanguageModel, Seq2Seq  # noqa: F401
from .teacher_forcing import teacher_forcing_loss  # noqa: F401
