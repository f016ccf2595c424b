"""BertTokenizer: text -> WordPiece tokens -> ids -> model inputs, and ids -> text.

The pipeline is Google's `FullTokenizer`: the basic tokenizer (cleaning, case, punctuation, CJK), then
WordPiece on each word, then the vocabulary's ids. `encode` lays a pair out as BERT reads it (paper,
section 3):

    tokens           [CLS] my dog is cute [SEP] he likes play ##ing [SEP]
    token_type_ids     0    0   0  0   0    0    1    1     1    1     1
    attention_mask     1    1   1  1   1    1    1    1     1    1     1
"""

# token_type_ids pick the segment embedding (E_A or E_B); attention_mask is 0 on the [PAD] positions that
# `batch_encode` adds, so that attention ignores them.

import json
import os

import numpy as np

from minibert.errors import TokenizerError
from minibert.io.json_fields import read_object
from minibert.tokenizer.basic import BasicTokenizer
from minibert.tokenizer.tokenizer_json import TOKENIZER_JSON_NAME, read_tokenizer_json
from minibert.tokenizer.vocab import (
    CLS_TOKEN,
    MASK_TOKEN,
    PAD_TOKEN,
    SEP_TOKEN,
    SPECIAL_TOKENS,
    UNK_TOKEN,
    load_vocab,
    save_vocab,
    validate_vocab,
)
from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX, WordpieceTokenizer

VOCAB_FILE_NAME = "vocab.txt"
CONFIG_FILE_NAME = "tokenizer_config.json"


class BertTokenizer:
    """BERT's tokenizer over a vocab.txt; gives the same tokens and ids as HuggingFace's on the same file.

    do_lower_case: lowercase and strip accents (uncased models) or keep the text as it is (cased models).
    strip_accents: None follows do_lower_case, as in BERT; True or False forces accent stripping on or off.
    max_input_chars_per_word: a longer word becomes [UNK] unsearched (HuggingFace 100, Google 200).
    """

    def __init__(self, vocab_file, do_lower_case=True, max_input_chars_per_word=100, strip_accents=None):
        self._build(load_vocab(vocab_file), do_lower_case, max_input_chars_per_word, strip_accents)

    @classmethod
    def from_vocab_list(cls, tokens, do_lower_case=True, max_input_chars_per_word=100, strip_accents=None):
        """A tokenizer over an in-memory token list (id = position), e.g. for tests and lessons."""
        tokenizer = cls.__new__(cls)
        tokenizer._build(validate_vocab(list(tokens)), do_lower_case, max_input_chars_per_word, strip_accents)
        return tokenizer

    @classmethod
    def from_pretrained(cls, directory, **overrides):
        """Read a HuggingFace/Google model directory: its vocab.txt, and settings from tokenizer_config.json.

        Without a vocab.txt, the folder's tokenizer.json (HuggingFace's one-file format, the only one many recent
        checkpoints ship) gives the vocabulary and the settings instead. `directory` may also be the
        vocab.txt or tokenizer.json itself. Keyword arguments override the files' settings.
        """
        directory = os.fspath(directory)
        if os.path.isfile(directory):
            directory, vocab_file = os.path.dirname(directory), directory
        else:
            vocab_file = os.path.join(directory, VOCAB_FILE_NAME)
            json_file = os.path.join(directory, TOKENIZER_JSON_NAME)
            if not os.path.isfile(vocab_file) and os.path.isfile(json_file):
                vocab_file = json_file
        if vocab_file.endswith(".json"):
            # The settings that HuggingFace's fast tokenizer uses are those in the file, so they win over
            # tokenizer_config.json's (which the slow Python tokenizer reads).
            tokens, settings = read_tokenizer_json(vocab_file)
            return cls.from_vocab_list(tokens, **{**settings, **overrides})
        # tokenizer_config.json (optional) holds the settings of HuggingFace's Python tokenizer; each is
        # checked for its type, so "do_lower_case": "no" is refused rather than read as true.
        config = read_object(os.path.join(directory, CONFIG_FILE_NAME), TokenizerError, "fix or delete it",
                             optional=True)
        settings = {"do_lower_case": config.boolean("do_lower_case", None),
                    "strip_accents": config.boolean("strip_accents", None, null=True),
                    "max_input_chars_per_word": config.integer("max_input_chars_per_word", None, minimum=1)}
        # A setting the file does not have (or a null strip_accents) keeps BertTokenizer's default.
        settings = {key: value for key, value in settings.items() if value is not None}
        settings.update(overrides)
        return cls(vocab_file, **settings)

    def save_pretrained(self, directory):
        """Write vocab.txt and tokenizer_config.json into `directory`, for our or HF's `from_pretrained`."""
        os.makedirs(directory, exist_ok=True)
        save_vocab(self.ids_to_tokens, os.path.join(directory, VOCAB_FILE_NAME))
        config = {
            "do_lower_case": self.basic.do_lower_case,
            "strip_accents": self.basic.strip_accents,
            "max_input_chars_per_word": self.wordpiece.max_input_chars_per_word,
            "tokenizer_class": "BertTokenizer",
        }
        with open(os.path.join(directory, CONFIG_FILE_NAME), "w", encoding="utf-8") as file:
            json.dump(config, file, indent=2)
        return directory

    def _build(self, vocab, do_lower_case, max_input_chars_per_word, strip_accents):
        self.vocab = vocab  # token -> id
        self.ids_to_tokens = list(vocab)  # id -> token (validate_vocab numbers tokens in order)
        self.vocab_size = len(vocab)
        # The special tokens are never split, lowercased or cleaned, wherever they appear in the text.
        self.basic = BasicTokenizer(do_lower_case, never_split=SPECIAL_TOKENS, strip_accents=strip_accents)
        self.wordpiece = WordpieceTokenizer(vocab, UNK_TOKEN, max_input_chars_per_word)
        self.pad_token_id = vocab[PAD_TOKEN]
        self.unk_token_id = vocab[UNK_TOKEN]
        self.cls_token_id = vocab[CLS_TOKEN]
        self.sep_token_id = vocab[SEP_TOKEN]
        self.mask_token_id = vocab[MASK_TOKEN]
        self.special_token_ids = frozenset(vocab[token] for token in SPECIAL_TOKENS)

    @property
    def do_lower_case(self):
        return self.basic.do_lower_case

    def __repr__(self):
        return (
            f"BertTokenizer(vocab_size={self.vocab_size}, do_lower_case={self.basic.do_lower_case}, "
            f"strip_accents={self.basic.strip_accents})"
        )

    # ---- text <-> tokens <-> ids ---------------------------------------------------------------------------

    def tokenize(self, text):
        """Text -> WordPiece tokens: `I like playing` -> [`i`, `like`, `play`, `##ing`]."""
        # A special token comes out of the basic tokenizer whole, and WordPiece keeps it whole because the
        # vocabulary holds it: no separate case is needed.
        return self.wordpiece.tokenize_words(self.basic.tokenize(text))

    def convert_tokens_to_ids(self, tokens):
        """Tokens -> ids; a token not in the vocabulary gets the [UNK] id."""
        vocab, unk = self.vocab, self.unk_token_id
        return [vocab.get(token, unk) for token in tokens]

    def convert_ids_to_tokens(self, ids):
        """Ids -> tokens; an id outside [0, vocab_size) is an error rather than a silent [UNK]."""
        tokens = []
        for token_id in ids:
            # bool is an int in Python, and a float id would be silently truncated: both are mistakes.
            if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, (bool, np.bool_)):
                raise TokenizerError(f"token id {token_id!r} is a {type(token_id).__name__}; ids are "
                                     "integers, e.g. the input_ids that encode gives")
            if not 0 <= token_id < self.vocab_size:
                raise TokenizerError(f"token id {token_id} is outside the vocabulary [0, {self.vocab_size})")
            tokens.append(self.ids_to_tokens[int(token_id)])
        return tokens

    def decode(self, ids, skip_special_tokens=False):
        """Ids -> text: tokens joined by spaces, each `##` piece glued to the piece before it.

        The result is the normalised text (lowercased, accents stripped, a space around each punctuation
        character), not the original: `Don't!` encodes and decodes to `don ' t !`.
        """
        if skip_special_tokens:
            ids = [token_id for token_id in ids if token_id not in self.special_token_ids]
        text = " ".join(self.convert_ids_to_tokens(ids))
        return text.replace(" " + CONTINUATION_PREFIX, "")

    # ---- model inputs --------------------------------------------------------------------------------------

    def encode(self, text_a, text_b=None, max_length=None, truncation=True):
        """One input: {input_ids, token_type_ids, attention_mask}, each a list, `[CLS] A [SEP]( B [SEP])`."""
        ids_a = self.convert_tokens_to_ids(self.tokenize(text_a))
        ids_b = None if text_b is None else self.convert_tokens_to_ids(self.tokenize(text_b))
        return self.build_inputs(ids_a, ids_b, max_length, truncation)

    def build_inputs(self, ids_a, ids_b=None, max_length=None, truncation=True):
        """Lay out token ids as `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, truncated to max_length."""
        num_special = 2 if ids_b is None else 3
        if max_length is not None:
            if max_length < num_special:
                raise TokenizerError(
                    f"max_length={max_length} leaves no room for the {num_special} special tokens; use at "
                    f"least {num_special}"
                )
            too_long = len(ids_a) + len(ids_b or ()) + num_special > max_length
            if too_long and not truncation:
                raise TokenizerError(
                    f"the input has {len(ids_a) + len(ids_b or ()) + num_special} tokens, more than "
                    f"max_length={max_length}; pass truncation=True or a larger max_length"
                )
            if too_long:
                ids_a, trimmed_b = truncate_longest_first(ids_a, ids_b or [], max_length - num_special)
                ids_b = None if ids_b is None else trimmed_b
        input_ids = [self.cls_token_id, *ids_a, self.sep_token_id]
        token_type_ids = [0] * len(input_ids)
        if ids_b is not None:
            input_ids += [*ids_b, self.sep_token_id]
            token_type_ids += [1] * (len(ids_b) + 1)
        attention_mask = [1] * len(input_ids)
        return {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": attention_mask}

    def batch_encode(self, pairs, max_length=None, padding=True, truncation=True):
        """Many inputs -> NumPy int64 arrays of shape (B, S), padded with [PAD] and attention_mask 0.

        pairs: texts, or (text_a, text_b) tuples (text_b may be None), freely mixed.
        padding: True pads to the longest input, "max_length" to max_length; False needs equal lengths.
        """
        if padding not in (True, False, "longest", "max_length"):
            raise TokenizerError(f"padding must be True, False, 'longest' or 'max_length', got {padding!r}")
        if padding == "max_length" and max_length is None:
            raise TokenizerError("padding='max_length' needs max_length; pass one, or use padding=True")
        if isinstance(pairs, (str, bytes)):  # iterating would encode each character as an input of its own
            raise TokenizerError(f"batch_encode takes a list of texts, got a single {type(pairs).__name__}; "
                                 "wrap it in a list, or use encode for one text")
        encoded = []
        for pair in pairs:
            if isinstance(pair, (tuple, list)) and len(pair) != 2:
                raise TokenizerError(f"batch_encode: an input {pair!r:.80} has {len(pair)} parts; give a "
                                     "text or a (text_a, text_b) pair")
            text_a, text_b = pair if isinstance(pair, (tuple, list)) else (pair, None)
            encoded.append(self.encode(text_a, text_b, max_length, truncation))
        if not encoded:
            raise TokenizerError("batch_encode got no inputs; pass at least one text")
        lengths = [len(item["input_ids"]) for item in encoded]
        if padding is False and len(set(lengths)) > 1:
            raise TokenizerError(f"inputs have different lengths {sorted(set(lengths))}; pass padding=True")
        seq_len = max_length if padding == "max_length" else max(lengths)
        batch = {}
        for key, fill in (("input_ids", self.pad_token_id), ("token_type_ids", 0), ("attention_mask", 0)):
            array = np.full((len(encoded), seq_len), fill, dtype=np.int64)  # (B, S)
            for row, item in enumerate(encoded):
                array[row, : len(item[key])] = item[key]
            batch[key] = array
        return batch


def truncate_longest_first(ids_a, ids_b, max_tokens):
    """Trim the longer of A and B (B on a tie) by one token at the end until both fit in max_tokens.

    Google's `truncate_seq_pair` rule, without its random choice of end: trimming the longer side keeps as
    much of each segment as possible. Returns the trimmed copies.
    """
    len_a, len_b = len(ids_a), len(ids_b)
    while len_a + len_b > max_tokens:
        if len_a > len_b:
            len_a -= 1
        else:
            len_b -= 1
    return ids_a[:len_a], ids_b[:len_b]
