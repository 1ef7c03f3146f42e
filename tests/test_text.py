"""Tokenizers, Vocab (ids, JSON, checkpoint round trip) and batching."""
import pytest
from hypothesis import given, strategies as st

import minigrad
from minigrad.text import (BOS_IDX, EOS_IDX, PAD_IDX, UNK_IDX, BPETokenizer, BucketIterator, CharTokenizer,
                           LMBatches, Vocab, WordTokenizer, pad_batch, pair_batch, word_tokenize)


def test_word_tokenizer_lowercases_and_splits_punctuation():
    assert word_tokenize("Not bad, REALLY!") == ["not", "bad", ",", "really", "!"]
    assert WordTokenizer(lower=False).tokenize("Hi, Bob.") == ["Hi", ",", "Bob", "."]
    assert WordTokenizer().detokenize(["not", "bad", ",", "really", "!"]) == "not bad, really!"


@given(st.text(max_size=60))
def test_word_tokenize_equals_one_regex_over_the_whole_text(text):
    import re
    assert word_tokenize(text) == re.findall(r"\w+|[^\w\s]", text.lower())


@given(st.text(max_size=40))
def test_char_tokenizer_round_trips(text):
    tokenizer = CharTokenizer()
    assert tokenizer.detokenize(tokenizer.tokenize(text)) == text


def test_bpe_learns_frequent_pairs_and_round_trips_words():
    texts = ["low lower lowest", "newer wider newest", "low low new"] * 3
    bpe = BPETokenizer.train(texts, num_merges=12)
    assert bpe.merges[0] == ("l", "o")          # the most frequent pair comes first
    assert bpe.tokenize("low") == ["low</w>"]
    for word in ["lowest", "newer", "unseen"]:
        assert bpe.detokenize(bpe.tokenize(word)) == word
    assert BPETokenizer.from_metadata(bpe.to_metadata()).tokenize("lowest newer") == bpe.tokenize("lowest newer")
    assert BPETokenizer.train(texts, num_merges=12).merges == bpe.merges    # deterministic


def test_vocab_specials_counts_max_size_and_min_freq():
    streams = [["b", "a", "a"], ["c", "a", "b", "d"]]
    vocab = Vocab.build(streams)
    assert vocab.itos[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"]
    assert (PAD_IDX, UNK_IDX, BOS_IDX, EOS_IDX) == (0, 1, 2, 3)
    assert vocab.itos[4:] == ["a", "b", "c", "d"]     # by count, ties alphabetical
    assert vocab.counts["a"] == 3
    assert Vocab.build(streams, min_freq=2).itos[4:] == ["a", "b"]
    assert Vocab.build(streams, max_size=1).itos[4:] == ["a"]
    assert vocab["zzz"] == UNK_IDX and "a" in vocab and len(vocab) == 8


def test_vocab_encode_decode():
    vocab = Vocab(["the", "cat"])
    ids = vocab.encode(["the", "dog", "cat"], add_bos=True, add_eos=True)
    assert ids == [BOS_IDX, 4, UNK_IDX, 5, EOS_IDX]
    assert vocab.decode(ids) == ["the", "<unk>", "cat"]
    assert vocab.decode([4, 0, 5, 3, 4, 0]) == ["the", "cat"]
    assert vocab.decode([4, 0, 3, 5], stop_at_eos=False, skip_pad=False) == ["the", "<pad>", "<eos>", "cat"]
    assert vocab.decode(minigrad.tensor([4, 5, 3])) == ["the", "cat"]


def test_vocab_json_and_checkpoint_round_trip(tmp_path):
    vocab = Vocab.build([word_tokenize("the cat sat on the mat .")])
    vocab.to_json(tmp_path / "vocab.json")
    assert Vocab.from_json(tmp_path / "vocab.json") == vocab
    layer = minigrad.nn.Embedding(len(vocab), 3)
    minigrad.save({"model": layer.state_dict(), "vocab": vocab.to_metadata()}, tmp_path / "model.npz")
    loaded = minigrad.load(tmp_path / "model.npz")
    again = Vocab.from_metadata(loaded["vocab"])
    assert again == vocab and again.decode(again.encode(["the", "mat"])) == ["the", "mat"]
    with pytest.raises(ValueError, match="specials"):
        Vocab.from_metadata({"itos": ["a", "<pad>", "<unk>", "<bos>", "<eos>"]})


def test_pad_batch_shapes_lengths_masks(device):
    batch = pad_batch([[5, 6, 7], [8], [9, 10]], device=device)
    assert batch.ids.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]
    assert batch.lengths.tolist() == [3, 1, 2]
    assert batch.mask.tolist() == [[True] * 3, [True, False, False], [True, True, False]]
    assert batch.ids.device == device
    fixed = pad_batch([[5, 6, 7], [8]], length=2, batch_first=False, device=device)
    assert fixed.ids.tolist() == [[5, 8], [6, 0]]
    assert fixed.lengths.tolist() == [2, 1]
    assert fixed.mask.tolist() == [[True, True], [True, False]]
    assert pad_batch([[1]], length=3).ids.tolist() == [[1, 0, 0]]


def test_bucket_iterator_groups_lengths_covers_everything_and_is_seeded():
    sequences = [[1] * (1 + (i * 7) % 23) for i in range(200)]
    labels = list(range(200))
    it = BucketIterator(sequences, batch_size=10, labels=labels, seed=3, pool=5)
    seen, padding = [], 0
    for batch, y in it:
        seen += y.tolist()
        padding += int((~batch.mask).sum().item())
    assert sorted(seen) == labels and len(it) == 20
    unsorted = sum(10 * max(len(s) for s in sequences[i:i + 10]) - sum(len(s) for s in sequences[i:i + 10])
                   for i in range(0, 200, 10))
    assert padding < unsorted / 3     # sorting by length within pools keeps padding small
    first = BucketIterator(sequences, 10, seed=3).batches()
    assert BucketIterator(sequences, 10, seed=3).batches() == first
    assert BucketIterator(sequences, 10, seed=4).batches() != first
    it = BucketIterator(sequences, 10, seed=3)
    assert it.batches() != it.batches()     # a new order every epoch


def test_lm_batches_shift_targets_and_continue_rows(device):
    stream = list(range(103))
    batches = list(LMBatches(stream, batch_size=4, seq_len=6, device=device))   # rows of 25 tokens
    assert len(batches) == len(LMBatches(stream, 4, 6)) == 4
    x0, y0 = batches[0]
    assert x0.shape == (4, 6) and x0.device == device
    assert x0.tolist()[1] == list(range(25, 31)) and y0.tolist()[1] == list(range(26, 32))
    row = sum((x.tolist()[2] for x, _ in batches), [])
    assert row == list(range(50, 74))       # row 2 read contiguously across batches
    assert batches[-1][0].shape == (4, 6) and batches[-1][1].tolist()[0][-1] == 24
    xt, yt = next(iter(LMBatches(stream, 4, 6, batch_first=False)))
    assert xt.shape == (6, 4) and xt.tolist() == [list(r) for r in zip(*x0.tolist())]


def test_pair_batch_pads_sources_and_wraps_targets_in_bos_eos(device):
    pairs = [("ab", "xyz"), ("c", "x")]
    src_vocab, tgt_vocab = Vocab.build(list(s) for s, _ in pairs), Vocab.build(list(t) for _, t in pairs)
    src, tgt = pair_batch(pairs, src_vocab, tgt_vocab, device=device)
    assert src.shape == (2, 2) and tgt.shape == (2, 5)
    assert src.tolist()[1] == [src_vocab.stoi["c"], PAD_IDX]
    assert tgt.tolist() == [[BOS_IDX] + tgt_vocab.encode(list("xyz")) + [EOS_IDX],
                            [BOS_IDX, tgt_vocab.stoi["x"], EOS_IDX, PAD_IDX, PAD_IDX]]
