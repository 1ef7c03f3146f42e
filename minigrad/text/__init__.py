"""Text: tokenizers, the vocabulary, and batching (plain Python until the ids become Tensors)."""
from .batching import Batch, BucketIterator, LMBatches, pad_batch, pair_batch
from .tokenizers import BPETokenizer, CharTokenizer, WordTokenizer, char_tokenize, word_tokenize
from .vocab import BOS, BOS_IDX, EOS, EOS_IDX, PAD, PAD_IDX, SPECIALS, UNK, UNK_IDX, Vocab
