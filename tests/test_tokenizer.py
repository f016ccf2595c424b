"""Tests of the WordPiece tokenizer: BERT's rules checked by hand, HuggingFace's golden tokens, bad input,
fuzzing.

The golden file (tests/fixtures/tokenizer/golden.json) holds HuggingFace's tokens and ids for a few hundred
lines; tests/fixtures/tokenizer/make_golden.py regenerates it (it alone needs `transformers`).
"""

import json
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.errors import TokenizerError
from minibert.tokenizer import (
    SPECIAL_TOKENS,
    BasicTokenizer,
    BertTokenizer,
    WordpieceTokenizer,
    load_vocab,
    save_vocab,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "tokenizer")

# A small vocabulary laid out by hand; every expected value below was worked out from BERT's rules on paper.
WORDS = ["i", "like", "play", "##ing", "##ed", "##s", "un", "##aff", "##able", "the", "cat", "cafe", "café",
         "Café", "hello", "world", "a", "##a", "b", "##b", "x", "##x", "bert",
         "我", "喜", "欢", "猫", "模", "型",
         "$", "^", "`", "5", "2", ",", ".", "!", "'", "(", ")", "안녕", "カタカナ", "hi", "😀"]
VOCAB = [*SPECIAL_TOKENS, *WORDS]


@pytest.fixture(scope="module")
def uncased():
    return BertTokenizer.from_vocab_list(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def cased():
    return BertTokenizer.from_vocab_list(VOCAB, do_lower_case=False)


# ---- the seed's examples ----------------------------------------------------------------------------------

def test_seed_examples(uncased):
    """The seed's `playing` -> `play ##ing`, and `我喜欢猫` -> one token per character."""
    assert uncased.tokenize("playing") == ["play", "##ing"]
    assert uncased.tokenize("我喜欢猫") == ["我", "喜", "欢", "猫"]
    assert uncased.tokenize("I like playing") == ["i", "like", "play", "##ing"]


def test_unaffable_is_split_greedily(uncased):
    """Longest match first: `unaffable` -> `un ##aff ##able`, the example of Google's docstring."""
    assert uncased.tokenize("unaffable") == ["un", "##aff", "##able"]


def test_encode_lays_out_a_pair(uncased):
    """`[CLS] A [SEP] B [SEP]`, segment 0 up to and including the first [SEP], segment 1 after it."""
    ids = uncased.vocab
    encoded = uncased.encode("I like", "我喜欢猫")
    assert encoded["input_ids"] == [ids["[CLS]"], ids["i"], ids["like"], ids["[SEP]"],
                                    ids["我"], ids["喜"], ids["欢"], ids["猫"], ids["[SEP]"]]
    assert encoded["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert encoded["attention_mask"] == [1] * 9


def test_encode_single_text_has_no_second_segment(uncased):
    """One text: `[CLS] A [SEP]`, all segment 0, even when truncated."""
    ids = uncased.vocab
    expected = [ids["[CLS]"], ids["hello"], ids["world"], ids["[SEP]"]]
    assert uncased.encode("hello world")["input_ids"] == expected
    truncated = uncased.encode("hello world cat", max_length=4)
    assert truncated["input_ids"] == expected
    assert truncated["token_type_ids"] == [0, 0, 0, 0]


def test_truncation_trims_the_longer_segment_b_on_ties(uncased):
    """Google's truncate_seq_pair. A has 4 tokens, B 2, max_length 6 leaves room for 3 after [CLS] and two
    [SEP]: A loses its last 2 (4 > 2, 3 > 2), then on the tie 2 = 2 B loses its last one."""
    ids = uncased.vocab
    encoded = uncased.encode("a b x a", "hello world", max_length=6)
    cls, sep = ids["[CLS]"], ids["[SEP]"]
    assert encoded["input_ids"] == [cls, ids["a"], ids["b"], sep, ids["hello"], sep]
    assert encoded["token_type_ids"] == [0, 0, 0, 0, 1, 1]
    with pytest.raises(TokenizerError, match="truncation=True"):
        uncased.encode("a b x a", "hello world", max_length=6, truncation=False)
    with pytest.raises(TokenizerError, match="special tokens"):
        uncased.encode("a", "b", max_length=2)


def test_batch_encode_pads_with_pad_and_masks_it(uncased):
    """Shorter rows are filled with [PAD] ids, segment 0 and attention 0, up to the longest row."""
    batch = uncased.batch_encode(["hello", ("a", "b")])
    pad, cls, sep = uncased.pad_token_id, uncased.cls_token_id, uncased.sep_token_id
    ids = uncased.vocab
    np.testing.assert_array_equal(batch["input_ids"], [[cls, ids["hello"], sep, pad, pad],
                                                       [cls, ids["a"], sep, ids["b"], sep]])
    np.testing.assert_array_equal(batch["token_type_ids"], [[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]])
    np.testing.assert_array_equal(batch["attention_mask"], [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    assert batch["input_ids"].shape == (2, 5)
    assert uncased.batch_encode(["hello"], max_length=8, padding="max_length")["input_ids"].shape == (1, 8)
    with pytest.raises(TokenizerError, match="padding"):
        uncased.batch_encode(["hello", "a b"], padding=False)


def test_decode_glues_pieces_and_can_skip_specials(uncased):
    """`play ##ing` decodes to `playing`; skip_special_tokens drops [CLS]/[SEP]/[PAD]."""
    ids = uncased.encode("I like playing!")["input_ids"]
    assert uncased.decode(ids) == "[CLS] i like playing ! [SEP]"
    assert uncased.decode(ids, skip_special_tokens=True) == "i like playing !"
    with pytest.raises(TokenizerError, match="outside the vocabulary"):
        uncased.decode([len(VOCAB)])


def test_ids_round_trip_and_unknown_tokens(uncased):
    """Tokens -> ids -> tokens is the identity; a token outside the vocabulary maps to the [UNK] id."""
    tokens = ["play", "##ing", "[MASK]", "我"]
    assert uncased.convert_ids_to_tokens(uncased.convert_tokens_to_ids(tokens)) == tokens
    assert uncased.convert_tokens_to_ids(["no-such-token"]) == [uncased.unk_token_id]
    assert [uncased.pad_token_id, uncased.unk_token_id, uncased.cls_token_id, uncased.sep_token_id,
            uncased.mask_token_id] == [0, 1, 2, 3, 4]
    assert uncased.vocab_size == len(VOCAB) == len(uncased.ids_to_tokens)


# ---- tricky cases, checked by hand against BERT's rules ----------------------------------------------------

def test_accents_are_stripped_only_when_lowercasing(uncased, cased):
    """Uncased: `Café` -> lowercase, NFD, drop the accent -> `cafe`. Cased: `Café` stays `Café`."""
    assert uncased.tokenize("Café") == ["cafe"]
    assert cased.tokenize("Café") == ["Café"]
    assert BasicTokenizer(do_lower_case=True).tokenize("NAÏVE Ångström") == ["naive", "angstrom"]
    assert BasicTokenizer(do_lower_case=False).tokenize("NAÏVE") == ["NAÏVE"]
    assert BasicTokenizer(do_lower_case=False, strip_accents=True).tokenize("NAÏVE") == ["NAIVE"]
    assert BasicTokenizer(do_lower_case=True, strip_accents=False).tokenize("NAÏVE") == ["naïve"]


def test_cjk_next_to_latin_is_split(uncased):
    """Each CJK character is a token, even glued to Latin letters: `BERT模型` -> `bert 模 型`."""
    assert uncased.tokenize("BERT模型") == ["bert", "模", "型"]
    assert BasicTokenizer().tokenize("我爱NLP和AI!") == ["我", "爱", "nlp", "和", "ai", "!"]


def test_cjk_ranges_include_extensions_and_compatibility_ideographs():
    """Extension B (U+20000), extension E (U+2B820) and compatibility ideographs (U+F900) split one by one;
    extension F (U+2CEB0) lies outside BERT's ranges and does not."""
    basic = BasicTokenizer(do_lower_case=False)
    assert basic.tokenize("a\U00020000b\U0002b820c\uf900d") == ["a", "\U00020000", "b", "\U0002b820", "c",
                                                               "\uf900", "d"]
    assert basic.tokenize("a\U0002ceb0b") == ["a\U0002ceb0b"]


def test_hangul_and_kana_are_not_split(cased):
    """Hangul and kana are not in BERT's CJK ranges: a Korean or katakana word stays one word."""
    assert cased.tokenize("안녕") == ["안녕"]
    assert cased.tokenize("カタカナ") == ["カタカナ"]
    assert BasicTokenizer(do_lower_case=False).tokenize("ひらがな カタカナ") == ["ひらがな", "カタカナ"]


def test_lowercasing_decomposes_hangul_into_jamo():
    """A BERT quirk: accent stripping is NFD, which splits a Hangul syllable into its jamo (none are Mn, so
    all stay): `한` (U+D55C) -> U+1112 U+1161 U+11AB."""
    assert BasicTokenizer(do_lower_case=True).tokenize("한") == ["\u1112\u1161\u11ab"]


def test_ascii_symbols_are_punctuation():
    """`$ ^ \\`` are Unicode symbols (S*), not punctuation (P*); BERT splits all non-alphanumeric ASCII."""
    assert BasicTokenizer().tokenize("$5^2`x`") == ["$", "5", "^", "2", "`", "x", "`"]
    assert BasicTokenizer().tokenize("a+b=c|d~e<f>") == list("a+b=c|d~e<f>")


def test_unicode_punctuation_splits_but_unicode_symbols_do_not():
    """`，。«»—…` are category P*: split. `€ ° ©` are S* outside ASCII: they stay inside the word."""
    assert BasicTokenizer().tokenize("好，是。«a»b—c…") == list("好，是。«a»b—c…")
    assert BasicTokenizer().tokenize("5€ 10°c ©x") == ["5€", "10°c", "©x"]


def test_control_and_format_characters_are_dropped():
    """NUL, U+FFFD, Cc controls, Cf format characters (zero-width space, soft hyphen, BOM) and private-use
    characters vanish; the rest of the word closes up."""
    basic = BasicTokenizer(do_lower_case=False)
    assert basic.tokenize("a\x00b\x07c\ufffdd\x7fe") == ["abcde"]
    assert basic.tokenize("zero\u200bwidth soft\u00adhyphen \ufeffbom pri\ue000vate") == [
        "zerowidth", "softhyphen", "bom", "private"]


def test_whitespace_of_every_kind_separates_words():
    """\\t \\n \\r, no-break space, ideographic space and the line separator all split words."""
    assert BasicTokenizer().tokenize("a\tb\nc\r\nd\u00a0e\u3000f\u2028g") == list("abcdefg")
    assert BasicTokenizer().tokenize("  \t\n ") == []


def test_unassigned_code_points_are_kept():
    """Unassigned code points (Cn) are kept, as in Google's code and HF's Rust tokenizer."""
    assert BasicTokenizer().tokenize("a\u0378b") == ["a\u0378b"]


def test_final_sigma_lowercases_to_plain_sigma():
    """`ΣΑΣ` -> `σασ`, character by character (Python's lower() alone would end it in `ς`)."""
    assert BasicTokenizer(do_lower_case=True).tokenize("ΣΑΣ") == ["σασ"]


def test_emoji_is_not_punctuation(uncased):
    """Emoji are symbols (So), not punctuation: glued to letters they stay in the word, which then may not be
    spellable and becomes [UNK]."""
    assert uncased.tokenize("😀") == ["😀"]
    assert uncased.tokenize("hi😀") == ["[UNK]"]  # `hi` matches, `##😀` is not in the vocabulary
    assert BasicTokenizer().tokenize("hi😀there") == ["hi😀there"]


def test_word_over_the_length_limit_is_unknown(uncased):
    """A word of 100 characters is still searched; one of 101 becomes [UNK] (HF's limit, the default)."""
    assert uncased.tokenize("a" * 100) == ["a"] + ["##a"] * 99
    assert uncased.tokenize("a" * 101) == ["[UNK]"]
    google = BertTokenizer.from_vocab_list(VOCAB, max_input_chars_per_word=200)
    assert google.tokenize("a" * 101) == ["a"] + ["##a"] * 100


def test_word_that_cannot_be_segmented_is_one_unknown(uncased):
    """`playingz`: `play ##ing` match, `##z` does not, so the WHOLE word is [UNK], not `play ##ing [UNK]`."""
    assert uncased.tokenize("playingz like") == ["[UNK]", "like"]
    assert uncased.tokenize("zplaying") == ["[UNK]"]


def test_special_tokens_are_kept_whole_anywhere(uncased):
    """`[MASK]` in the text is one token even glued to words, and is not lowercased; `[mask]` is text."""
    assert uncased.tokenize("x[MASK]a") == ["x", "[MASK]", "a"]
    assert uncased.tokenize("[CLS][SEP] hello") == ["[CLS]", "[SEP]", "hello"]
    assert uncased.tokenize("[mask]") == ["[UNK]"] * 3  # `[`, `mask`, `]`: none is in the vocabulary
    assert BasicTokenizer().tokenize("[mask]") == ["[", "mask", "]"]


def test_wordpiece_alone_on_whitespace_separated_words():
    """WordpieceTokenizer takes basic-tokenized text: `unaffable cat` -> `un ##aff ##able cat`."""
    wordpiece = WordpieceTokenizer(load_vocab_dict(VOCAB))
    assert wordpiece.tokenize("unaffable cat") == ["un", "##aff", "##able", "cat"]
    assert wordpiece.tokenize("") == []


def load_vocab_dict(tokens):
    return {token: index for index, token in enumerate(tokens)}


# ---- the golden file: HuggingFace's tokens ---------------------------------------------------------------

with open(os.path.join(FIXTURES, "golden.json"), encoding="utf-8") as _file:
    GOLDEN = json.load(_file)

_TOKENIZERS = {}


def golden_tokenizer(vocab_name, do_lower_case):
    key = (vocab_name, do_lower_case)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = BertTokenizer(os.path.join(FIXTURES, vocab_name), do_lower_case=do_lower_case)
    return _TOKENIZERS[key]


@pytest.mark.parametrize("vocab_name,do_lower_case", sorted({(c["vocab"], c["do_lower_case"])
                                                             for c in GOLDEN["cases"]}))
def test_golden_tokens_and_ids_match_huggingface(vocab_name, do_lower_case):
    """On every golden line, the tokens and the input ids equal those of HF's Rust and Python tokenizers."""
    tokenizer = golden_tokenizer(vocab_name, do_lower_case)
    cases = [c for c in GOLDEN["cases"] if (c["vocab"], c["do_lower_case"]) == (vocab_name, do_lower_case)]
    assert len(cases) > 250
    wrong = [(c["text"], tokenizer.tokenize(c["text"]), c["tokens"]) for c in cases
             if tokenizer.tokenize(c["text"]) != c["tokens"]
             or tokenizer.encode(c["text"])["input_ids"] != c["input_ids"]]
    assert not wrong, f"{len(wrong)} lines differ, the first: {wrong[0]}"


def test_golden_covers_english_and_chinese():
    """The golden file really holds hundreds of English and Chinese lines (guards against a thin fixture)."""
    texts = {c["text"] for c in GOLDEN["cases"]}
    assert sum(any("\u4e00" <= char <= "\u9fff" for char in text) for text in texts) >= 60
    assert sum(text.isascii() and len(text) > 40 for text in texts) >= 150


def test_golden_divergences_follow_the_chosen_side():
    """Where HF's two tokenizers disagree (NFC in the Python one, the Rust one's CJK range), we give the
    answer of the side named in the fixture: Google's behaviour, which one of the two shares."""
    assert GOLDEN["divergences"]
    for case in GOLDEN["divergences"]:
        tokenizer = golden_tokenizer(case["vocab"], case["do_lower_case"])
        side = case["follow"]
        assert tokenizer.tokenize(case["text"]) == case[f"{side}_tokens"], case["why"]
        assert tokenizer.encode(case["text"])["input_ids"] == case[f"{side}_input_ids"], case["why"]


def test_golden_pairs_match_huggingface_layout_and_truncation():
    """Pairs `[CLS] A [SEP] B [SEP]`: ids, segments and mask equal HF's, truncated by Google's rule."""
    assert len(GOLDEN["pairs"]) > 100
    for pair in GOLDEN["pairs"]:
        tokenizer = golden_tokenizer(pair["vocab"], pair["do_lower_case"])
        encoded = tokenizer.encode(pair["text_a"], pair["text_b"], max_length=pair["max_length"])
        for key in ("input_ids", "token_type_ids", "attention_mask"):
            assert encoded[key] == pair[key], (key, pair["text_a"], pair["text_b"], pair["max_length"])


# ---- vocab.txt files -------------------------------------------------------------------------------------

def test_vocab_file_round_trip(tmp_path):
    """save_vocab writes one token a line; load_vocab gives each its line number; CRLF files read the same."""
    path = save_vocab(VOCAB, tmp_path / "vocab.txt")
    assert load_vocab(path) == load_vocab_dict(VOCAB)
    (tmp_path / "crlf.txt").write_bytes("\r\n".join(VOCAB).encode("utf-8") + b"\r\n")
    assert load_vocab(tmp_path / "crlf.txt") == load_vocab_dict(VOCAB)


def test_golden_vocab_files_keep_bert_ids(tmp_path):
    """The tiny fixture vocabulary is laid out like BERT's: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102,
    [MASK] 103; from_pretrained reads it and the do_lower_case of tokenizer_config.json."""
    vocab = load_vocab(os.path.join(FIXTURES, "tiny_vocab.txt"))
    assert [vocab[token] for token in SPECIAL_TOKENS] == [0, 100, 101, 102, 103]
    save_vocab(vocab, tmp_path / "vocab.txt")
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    tokenizer = BertTokenizer.from_pretrained(tmp_path)
    assert tokenizer.do_lower_case is False
    assert tokenizer.tokenize("Cafe") == ["Cafe"]
    assert BertTokenizer.from_pretrained(tmp_path, do_lower_case=True).tokenize("Cafe") == ["cafe"]


def test_save_pretrained_then_from_pretrained(tmp_path, cased):
    """A saved tokenizer loads back with the same vocabulary and settings."""
    loaded = BertTokenizer.from_pretrained(cased.save_pretrained(tmp_path / "model"))
    assert loaded.vocab == cased.vocab and loaded.do_lower_case is False


@pytest.mark.parametrize("content,message", [
    (None, "no vocabulary file"),
    (b"", "empty"),
    (b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", r"lacks the special token\(s\) \[MASK\]"),
    (b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhi\nhi\n", "'hi' appears twice, on lines 6 and 7"),
    (b"[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n[MASK]\n", "line 3 is empty"),
    (b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n\xff\xfe\n", "not UTF-8"),
])
def test_bad_vocab_files_get_clear_errors(tmp_path, content, message):
    """Missing, empty, lacking a special token, duplicated token, empty line, not UTF-8: a TokenizerError
    that says what is wrong."""
    path = tmp_path / "vocab.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TokenizerError, match=message):
        BertTokenizer(path)


# ---- bad text --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [None, 42, ["a list"], 3.5])
def test_text_that_is_not_a_string_is_rejected(uncased, text):
    """Anything but str (or UTF-8 bytes) gets a TokenizerError naming the type."""
    with pytest.raises(TokenizerError, match=type(text).__name__):
        uncased.tokenize(text)


def test_bytes_must_be_utf8(uncased):
    """UTF-8 bytes are decoded (as Google's convert_to_unicode does); other bytes are an error."""
    assert uncased.tokenize("café".encode()) == ["cafe"]
    with pytest.raises(TokenizerError, match="not valid UTF-8"):
        uncased.tokenize("café".encode("latin-1"))


def test_lone_surrogates_and_rtl_text_do_not_crash(uncased):
    """A lone surrogate (category Cs) is dropped; right-to-left text is ordinary text."""
    assert uncased.tokenize("a\ud800b") == ["a", "##b"]
    assert BasicTokenizer().tokenize("a\ud800b \udfff") == ["ab"]
    assert BasicTokenizer(do_lower_case=False).tokenize("שלום עולם، مرحبا") == ["שלום", "עולם", "،", "مرحبا"]


def test_ten_megabyte_strings_do_not_crash(uncased):
    """10 MB of text in one string: one huge word is a single [UNK]; many words tokenize at full speed."""
    assert uncased.tokenize("x" * 10_000_000) == ["[UNK]"]
    tokens = uncased.tokenize("I like playing! " * 625_000)  # 10 MB
    assert len(tokens) == 5 * 625_000 and tokens[:5] == ["i", "like", "play", "##ing", "!"]


# ---- fuzzing ---------------------------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)


@given(ANY_TEXT)
def test_fuzz_never_crashes_and_ids_are_in_range(uncased, text):
    """Any Unicode (surrogates, marks, emoji, controls): tokenizing works and every id is a vocabulary id."""
    ids = uncased.encode(text)["input_ids"]
    assert all(0 <= token_id < uncased.vocab_size for token_id in ids)
    assert ids[0] == uncased.cls_token_id and ids[-1] == uncased.sep_token_id


@given(ANY_TEXT)
def test_fuzz_tokenizing_twice_gives_the_same_tokens(text):
    """Determinism, and the word cache changes nothing: a warm tokenizer agrees with a fresh one."""
    warm = BertTokenizer.from_vocab_list(VOCAB)
    first = warm.tokenize(text)
    assert warm.tokenize(text) == first
    assert BertTokenizer.from_vocab_list(VOCAB).tokenize(text) == first


@given(st.text(st.characters(max_codepoint=127), max_size=40), st.booleans())
def test_fuzz_ascii_fast_path_agrees_with_the_unicode_path(text, do_lower_case):
    """Pure-ASCII text takes a shortcut (str.translate); one non-ASCII word at the end sends the same text
    down the general regex path, which must split the ASCII part identically."""
    basic = BasicTokenizer(do_lower_case)
    assert basic.tokenize(text + " é")[:-1] == basic.tokenize(text)


# A word spelled with vocabulary pieces: a first piece, then `##` pieces.
FIRST_PIECES = ["play", "un", "the", "cat", "hello", "a", "b", "x", "i", "like"]
LATER_PIECES = ["ing", "ed", "s", "aff", "able", "a", "b", "x"]
IN_VOCAB_WORD = st.builds(lambda first, rest: first + "".join(rest), st.sampled_from(FIRST_PIECES),
                          st.lists(st.sampled_from(LATER_PIECES), max_size=3))
IN_VOCAB_TOKEN = st.one_of(IN_VOCAB_WORD, st.sampled_from(["我", "喜", "猫", ",", ".", "!", "$"]))


@given(st.lists(IN_VOCAB_TOKEN, min_size=1, max_size=12), st.sampled_from([" ", "  ", "\t", "\n"]))
def test_fuzz_decode_of_encode_is_the_normalised_text(uncased, words, separator):
    """For text written with vocabulary pieces, decode(encode(text)) gives the words back, one space apart."""
    text = separator.join(word.upper() if index % 2 else word for index, word in enumerate(words))
    decoded = uncased.decode(uncased.encode(text)["input_ids"], skip_special_tokens=True)
    assert decoded == " ".join(word.lower() for word in words)


def test_wordpiece_pieces_rebuild_the_word():
    """The pieces of a spellable word join back to the word: the first piece plain, the rest after `##`."""
    wordpiece = WordpieceTokenizer(load_vocab_dict(VOCAB))
    for word in ["playing", "unaffable", "aabbx", "我"]:
        pieces = wordpiece.tokenize_word(word)
        assert pieces[0] + "".join(piece[2:] for piece in pieces[1:]) == word
        assert all(piece.startswith("##") for piece in pieces[1:])


# ---- optional: live comparison with HuggingFace ---------------------------------------------------------

MIXED_ALPHABET = list("abcdefghij ABC.,!?'$-éüñÅ\t\n😀ßΣ") + list("我喜欢猫的是一") + ["[MASK]"]
BERT_LIKE_TEXT = st.lists(st.sampled_from(MIXED_ALPHABET), max_size=40).map("".join)


@given(BERT_LIKE_TEXT)
def test_live_matches_huggingface_on_random_text(text):
    """Optional (needs transformers): on random text over a mixed alphabet, our tokens equal HF's Rust and
    Python tokenizers' (when those two agree) on the golden uncased vocabulary."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    vocab_file = os.path.join(FIXTURES, "trained_uncased_vocab.txt")
    if "rust" not in _TOKENIZERS:
        transformers.logging.set_verbosity_error()
        _TOKENIZERS["rust"] = transformers.BertTokenizer(vocab=dict(load_vocab(vocab_file)))
        _TOKENIZERS["legacy"] = BertTokenizerLegacy(vocab_file)
    rust, legacy = _TOKENIZERS["rust"].tokenize(text), _TOKENIZERS["legacy"].tokenize(text)
    if rust == legacy:
        assert golden_tokenizer("trained_uncased_vocab.txt", True).tokenize(text) == rust
