"""BertTokenizer on hostile input: text a student pastes (lone surrogates, control and invisible characters,
10 MB strings), values that are not text, ids that are not ids, and broken vocabulary files. Each either
tokenizes sensibly or raises a TokenizerError that names the bad value."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.errors import TokenizerError
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

WORDS = ["the", "cat", "sat", "on", "mat", "play", "##ing", "##s", "猫", "e", "a", "!", ".", ","]


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS])


@pytest.mark.parametrize("text, expected", [
    ("cat\ud800sat", ["catsat"]),  # a lone surrogate (category Cs) is dropped, as HF drops it
    ("\udfffcat \udbff", ["cat"]),
    ("c\x00a\ufffdt", ["cat"]),  # NUL and the replacement character left by bad decoding
    ("\ufeffcat\u200b\u200d", ["cat"]),  # byte-order mark, zero-width space and joiner (Cf)
    ("\u202ecat\u202c", ["cat"]),  # right-to-left override: invisible, and dropped
    ("cat\u3000sat\u00a0on\tmat\r\n", ["cat", "sat", "on", "mat"]),  # ideographic and no-break spaces
    ("\U000f0000cat", ["cat"]),  # a private-use character (Co): dropped, as HuggingFace drops it
    ("", []),
    ("   \n\t ", []),
    ("[MASK" * 3, ["[", "mask", "[", "mask", "[", "mask"]),  # an unfinished special token is ordinary text
])
def test_hostile_characters_are_cleaned_like_bert(tokenizer, text, expected):
    """Invisible, control and unpaired-surrogate characters are dropped or become spaces, as BERT's cleaning
    does; nothing raises."""
    assert tokenizer.basic.tokenize(text) == expected


@given(text=st.text(alphabet=st.characters(codec=None), max_size=60))
def test_any_string_tokenizes_into_vocabulary_tokens(tokenizer, text):
    """Any str at all (surrogates, controls, every plane) tokenizes without error into tokens of the
    vocabulary, and encode() always gives [CLS] ... [SEP] within max_length."""
    tokens = tokenizer.tokenize(text)
    assert all(token in tokenizer.vocab for token in tokens)
    encoded = tokenizer.encode(text, text, max_length=8)
    assert len(encoded["input_ids"]) <= 8
    assert encoded["input_ids"][0] == tokenizer.cls_token_id
    assert encoded["input_ids"][-1] == tokenizer.sep_token_id


def test_a_10_mb_word_is_one_unknown_token_at_once(tokenizer):
    """A 10 MB string with no space (base64, a DNA sequence) is longer than max_input_chars_per_word: one
    [UNK], found without the quadratic WordPiece search."""
    assert tokenizer.tokenize("x" * 10_000_000) == ["[UNK]"]


def test_10_mb_of_text_tokenizes_completely(tokenizer):
    """10 MB of ordinary ASCII words give every token (4 per sentence plus the full stop), none lost."""
    sentence = "the cat sat playing. "
    tokens = tokenizer.tokenize(sentence * (10_000_000 // len(sentence)))
    assert len(tokens) == 6 * (10_000_000 // len(sentence))
    assert tokens[:6] == ["the", "cat", "sat", "play", "##ing", "."]


def test_a_megabyte_of_mixed_scripts_with_surrogates(tokenizer):
    """1 MB of accented Latin, CJK and lone surrogates goes through the slow (non-ASCII) path completely."""
    chunk = "Cát\ud800 猫猫 naïve! "
    tokens = tokenizer.tokenize(chunk * (1_000_000 // len(chunk)))
    assert tokens[:6] == ["cat", "猫", "猫", "[UNK]", "!", "cat"]
    assert len(tokens) == 5 * (1_000_000 // len(chunk))


@pytest.mark.parametrize("bad", [None, 42, 3.5, ["cat"], {"text": "cat"}, object()])
def test_values_that_are_not_text_are_named(tokenizer, bad):
    """tokenize/encode of a non-string raise TokenizerError naming the type (not an AttributeError from
    inside the regex engine)."""
    for call in (tokenizer.tokenize, tokenizer.encode):
        with pytest.raises(TokenizerError, match=type(bad).__name__):
            call(bad)


def test_bytes_must_be_utf8(tokenizer):
    """UTF-8 bytes are decoded; other bytes raise TokenizerError saying to decode them first."""
    assert tokenizer.tokenize("cat 猫".encode()) == ["cat", "猫"]
    with pytest.raises(TokenizerError, match="not valid UTF-8"):
        tokenizer.tokenize(b"\xff\xfecat")


@pytest.mark.parametrize("ids, named", [
    ([0, 10**9], "1000000000"), ([-1], "-1"), ([1.5], "float"), ([True], "bool"), (["5"], "str"),
])
def test_ids_that_are_not_vocabulary_ids(tokenizer, ids, named):
    """decode/convert_ids_to_tokens refuse ids outside the vocabulary and values that are not integers
    (a float id was silently truncated before), naming the value."""
    with pytest.raises(TokenizerError, match=named):
        tokenizer.decode(ids)


@pytest.mark.parametrize("call, named", [
    (lambda t: t.batch_encode("the cat"), "list of texts"),  # a str would be encoded character by character
    (lambda t: t.batch_encode([("the", "cat", "sat")]), "3 parts"),
    (lambda t: t.batch_encode([]), "no inputs"),
    (lambda t: t.batch_encode(["cat"], padding="longest-ish"), "padding"),
    (lambda t: t.batch_encode(["cat"], padding="max_length"), "needs max_length"),
    (lambda t: t.batch_encode(["cat", "the cat"], padding=False), "different lengths"),
    (lambda t: t.encode("cat", "sat", max_length=2), "max_length=2"),
    (lambda t: t.encode("cat sat on", max_length=4, truncation=False), "truncation=True"),
])
def test_bad_encoding_requests_are_explained(tokenizer, call, named):
    """Each misuse of encode/batch_encode raises TokenizerError saying what to pass instead."""
    with pytest.raises(TokenizerError, match=named):
        call(tokenizer)


VOCAB_FILES = {
    "missing": (None, "no vocabulary file"),
    "empty": (b"", "is empty"),
    "duplicate": ("\n".join([*SPECIAL_TOKENS, "cat", "cat"]).encode(), "'cat' appears twice.*6 and 7"),
    "blank line": ("\n".join([*SPECIAL_TOKENS, "", "cat"]).encode(), "line 6 is empty"),
    "latin-1": ("\n".join([*SPECIAL_TOKENS, "café"]).encode("latin-1"), "not UTF-8"),
    "no [MASK]": ("\n".join(SPECIAL_TOKENS[:-1]).encode(), r"\[MASK\]"),
    "binary": (bytes(range(256)) * 4, "not UTF-8"),
}


@pytest.mark.parametrize("case", VOCAB_FILES)
def test_broken_vocabulary_files_are_named(tmp_path, case):
    """A missing, empty, duplicated, blank-lined, non-UTF-8, incomplete or binary vocab.txt raises
    TokenizerError naming the file's problem (line numbers where there is one)."""
    content, named = VOCAB_FILES[case]
    path = tmp_path / "vocab.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TokenizerError, match=named):
        BertTokenizer(path)


def test_a_folder_with_a_broken_tokenizer_config(tmp_path, tokenizer):
    """from_pretrained on a folder whose tokenizer_config.json is not JSON names the file and the fix; on a
    folder without vocab.txt it names the missing vocab.txt."""
    tokenizer.save_pretrained(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text("{do_lower_case: yes")
    with pytest.raises(TokenizerError, match="tokenizer_config.json.*fix or delete it"):
        BertTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    assert BertTokenizer.from_pretrained(tmp_path).tokenize("Cat") == ["cat"]
    with pytest.raises(TokenizerError, match="vocab.txt"):
        BertTokenizer.from_pretrained(tmp_path / "elsewhere")
