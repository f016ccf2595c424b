"""tokenizer.json as a vocabulary source: a small hand-written file, read as HuggingFace's fast tokenizer
reads it, and everything minibert cannot represent refused by name.

The real file of all-MiniLM-L6-v2 is checked against HuggingFace's ids in test_real_checkpoint.py.
"""

import re

import pytest
from helpers import write_tokenizer_json

from minibert.errors import TokenizerError
from minibert.tokenizer import BertTokenizer

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "play", "##ing", "un", "##aff",
          "##able", "cafe", "café", ",", "!", "小", "明", "Hello"]


def write(folder, changes=()):
    return write_tokenizer_json(folder, TOKENS, changes)


def test_reads_vocabulary_and_bert_normalisation(tmp_path):
    tokenizer = BertTokenizer.from_pretrained(write(tmp_path))
    assert tokenizer.vocab_size == len(TOKENS)
    # lowercase + accents stripped (null follows lowercase), punctuation split, CJK split, WordPiece pieces.
    assert tokenizer.tokenize("Héllo, WORLD! playing unaffable 小明") == [
        "hello", ",", "world", "!", "play", "##ing", "un", "##aff", "##able", "小", "明"]
    assert tokenizer.encode("hello [MASK]")["input_ids"] == [2, 5, 4, 3]
    assert tokenizer.tokenize("hellox") == ["[UNK]"]


def test_strip_accents_null_follows_lowercase(tmp_path):
    uncased_off = [("normalizer", "lowercase", False)]
    assert BertTokenizer.from_pretrained(write(tmp_path, uncased_off)).tokenize("café Hello") == ["café", "Hello"]
    forced = uncased_off + [("normalizer", "strip_accents", True)]
    assert BertTokenizer.from_pretrained(write(tmp_path, forced)).tokenize("café Hello") == ["cafe", "Hello"]
    kept = [("normalizer", "strip_accents", False)]
    assert BertTokenizer.from_pretrained(write(tmp_path, kept)).tokenize("Café") == ["café"]


def test_max_input_chars_per_word(tmp_path):
    assert BertTokenizer.from_pretrained(write(tmp_path)).tokenize("playing") == ["play", "##ing"]
    short = BertTokenizer.from_pretrained(write(tmp_path, [("model", "max_input_chars_per_word", 6)]))
    assert short.tokenize("playing hello") == ["[UNK]", "hello"]


def test_vocab_txt_wins_and_file_path_works(tmp_path):
    write(tmp_path)
    assert BertTokenizer.from_pretrained(tmp_path / "tokenizer.json").vocab_size == len(TOKENS)
    (tmp_path / "vocab.txt").write_text("\n".join(TOKENS[:5] + ["world"]) + "\n", encoding="utf-8")
    assert BertTokenizer.from_pretrained(tmp_path).vocab_size == 6


def test_save_pretrained_writes_vocab_txt_with_the_same_ids(tmp_path):
    tokenizer = BertTokenizer.from_pretrained(write(tmp_path / "json"))
    tokenizer.save_pretrained(tmp_path / "saved")
    lines = (tmp_path / "saved" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert lines == TOKENS
    again = BertTokenizer.from_pretrained(tmp_path / "saved")
    text = "Héllo, world! playing 小明"
    assert again.encode(text) == tokenizer.encode(text)


@pytest.mark.parametrize("changes, words", [
    ([("model", "type", "BPE")], "BPE"),
    ([("model", "type", "Unigram")], "Unigram"),
    ([("normalizer", None, {"type": "Lowercase"})], "Lowercase"),
    ([("normalizer", None, None)], "normalizer must be an object, got null"),
    ([("normalizer", None, {"type": "Sequence", "normalizers": []})], "Sequence"),
    ([("normalizer", "handle_chinese_chars", False)], "handle_chinese_chars"),
    ([("normalizer", "clean_text", False)], "clean_text"),
    ([("pre_tokenizer", None, {"type": "Whitespace"})], "Whitespace"),
    ([("model", "unk_token", "<unk>")], "<unk>"),
    ([("model", "continuing_subword_prefix", "@@")], "@@"),
    ([("model", "vocab", {"[PAD]": 0, "[UNK]": 2})], "ids"),
    ([("model", "max_input_chars_per_word", 0)], "max_input_chars_per_word"),
    ([("added_tokens", None, [{"id": 5, "content": "<extra>", "special": False}])], "<extra>"),
    ([("added_tokens", None, [{"id": 7, "content": "[MASK]", "special": True}])], "[MASK]"),
])
def test_refuses_what_minibert_cannot_represent(tmp_path, changes, words):
    with pytest.raises(TokenizerError, match=rf"tokenizer\.json.*{re.escape(words)}"):
        BertTokenizer.from_pretrained(write(tmp_path, changes))


def test_refuses_a_file_that_is_not_a_tokenizer(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(TokenizerError, match="not valid JSON"):
        BertTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(TokenizerError, match=re.escape("must be a JSON object, not the list [1, 2]")):
        BertTokenizer.from_pretrained(tmp_path)
