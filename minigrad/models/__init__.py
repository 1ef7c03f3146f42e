"""Ready-made models for the lessons, built only from minigrad.nn."""
from .transformer import CausalLM, TransformerClassifier, TransformerTranslator  # noqa: F401
