"""tokenizer.json: HuggingFace's one-file tokenizer, read as a BERT vocabulary and its settings.

`BertNormalizer` + `BertPreTokenizer` is BERT's basic tokenizer (`basic.py`), and the WordPiece model is
`wordpiece.py`: so this module only translates the file into a token list and `BertTokenizer`'s
arguments. A file describing anything else (a BPE or Unigram model, another normaliser, settings
minibert's BERT tokenizer does not have) is refused with the reason, rather than read into a tokenizer
that would give other ids than HuggingFace's.
"""

# Many of today's checkpoints ship `tokenizer.json` (written by HuggingFace's Rust `tokenizers` library)
# instead of `vocab.txt`. For a BERT model the file holds the same information, spread over four parts:
#
#     "model":         {"type": "WordPiece", "vocab": {token: id}, "unk_token": "[UNK]",
#                       "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
#     "normalizer":    {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
#                       "strip_accents": null, "lowercase": true}
#     "pre_tokenizer": {"type": "BertPreTokenizer"}       (split on whitespace and punctuation)
#     "added_tokens":  [{"id": 0, "content": "[PAD]", "special": true, ...}, ...]

import os

from minibert.errors import TokenizerError, short_repr
from minibert.io.json_fields import read_object
from minibert.tokenizer.vocab import SPECIAL_TOKENS, UNK_TOKEN, validate_vocab
from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX

TOKENIZER_JSON_NAME = "tokenizer.json"


def read_tokenizer_json(path):
    """Read a WordPiece tokenizer.json: returns (tokens in id order, BertTokenizer keyword arguments)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TokenizerError(f"no tokenizer file at {path}; give a folder with vocab.txt or "
                             f"{TOKENIZER_JSON_NAME}")
    # Every field is read with its type checked (json_fields.py): a hand-edited file fails with the field.
    data = read_object(path, TokenizerError, _FIX)
    tokens, max_chars = _read_wordpiece(data.object("model"), path)
    settings = {"max_input_chars_per_word": max_chars, **_read_normalizer(data.object("normalizer"), path)}
    _check_pre_tokenizer(data.object("pre_tokenizer"), path)
    _check_added_tokens(data.objects("added_tokens", default=()), tokens, path)
    return tokens, settings


_FIX = (f"is it a {TOKENIZER_JSON_NAME} as HuggingFace's tokenizers library writes it? Download it again, or "
        "put the model's vocab.txt beside it")


def _read_wordpiece(model, path):
    """The vocabulary (a list, id = position) and max_input_chars_per_word of a WordPiece "model"."""
    kind = model.string("type")
    if kind != "WordPiece":
        raise TokenizerError(f"{path} describes a {kind} tokenizer; minibert reads BERT's WordPiece only "
                             "(a BPE or Unigram vocabulary belongs to another kind of model, e.g. GPT-2 or T5)")
    unknown = model.string("unk_token", UNK_TOKEN)
    prefix = model.string("continuing_subword_prefix", CONTINUATION_PREFIX)
    if unknown != UNK_TOKEN or prefix != CONTINUATION_PREFIX:
        raise TokenizerError(f"{path} uses unk_token {short_repr(unknown)} and continuing_subword_prefix "
                             f"{short_repr(prefix)}; minibert's BERT tokenizer has {UNK_TOKEN!r} and "
                             f"{CONTINUATION_PREFIX!r} only")
    vocab = model.object("vocab").values
    if not vocab:
        raise TokenizerError(f"{path}: the WordPiece model has no vocab (an object token -> id)")
    # type() rather than isinstance: true is an int in Python, and would pass for the id 1.
    ids = sorted(vocab.values()) if all(type(i) is int for i in vocab.values()) else None
    if ids != list(range(len(vocab))):
        raise TokenizerError(f"{path}: the vocab's ids must be 0, 1, ..., {len(vocab) - 1}, each once; "
                             "the file is damaged")
    tokens = sorted(vocab, key=vocab.__getitem__)
    validate_vocab(tokens, source=path)  # as a vocab.txt's are (an empty token, a lone surrogate), naming this file
    return tokens, model.integer("max_input_chars_per_word", 100, minimum=1)


def _read_normalizer(normalizer, path):
    """BertNormalizer's settings as BertTokenizer's do_lower_case and strip_accents."""
    kind = normalizer.string("type")
    if kind != "BertNormalizer":
        raise TokenizerError(f"{path} has normalizer {short_repr(kind)}; minibert implements BERT's "
                             "(BertNormalizer) only, so it would not give the ids this file's owner expects")
    # clean_text and handle_chinese_chars are always on in BERT's basic tokenizer (basic.py, steps 2 and 4).
    for key in ("clean_text", "handle_chinese_chars"):
        if not normalizer.boolean(key, True):
            raise TokenizerError(f"{path} turns the normalizer's {key} off; minibert's basic tokenizer "
                                 "always does it, as BERT does")
    # null strip_accents follows lowercase, in the Rust normaliser as in BertTokenizer (and here).
    return {"do_lower_case": normalizer.boolean("lowercase", True),
            "strip_accents": normalizer.boolean("strip_accents", None, null=True)}


def _check_pre_tokenizer(pre_tokenizer, path):
    kind = pre_tokenizer.string("type")
    if kind != "BertPreTokenizer":
        raise TokenizerError(f"{path} has pre_tokenizer {short_repr(kind)}; minibert splits words as BERT "
                             "does (BertPreTokenizer: whitespace and punctuation) only")


def _check_added_tokens(added_tokens, tokens, path):
    """Added tokens must be BERT's specials at their vocabulary ids: others would need matching of their own."""
    for added in added_tokens:
        content, token_id = added.string("content"), added.integer("id", minimum=0)
        if content not in SPECIAL_TOKENS or token_id >= len(tokens) or tokens[token_id] != content:
            raise TokenizerError(f"{path} adds the token {short_repr(content)} (id {token_id}); minibert's "
                                 f"BERT tokenizer knows only the special tokens {' '.join(SPECIAL_TOKENS)}, each "
                                 "at its vocabulary id")
