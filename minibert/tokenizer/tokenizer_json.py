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

import json
import os

from minibert.errors import TokenizerError
from minibert.tokenizer.vocab import SPECIAL_TOKENS, UNK_TOKEN
from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX

TOKENIZER_JSON_NAME = "tokenizer.json"


def read_tokenizer_json(path):
    """Read a WordPiece tokenizer.json: returns (tokens in id order, BertTokenizer keyword arguments)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except FileNotFoundError:
        raise TokenizerError(f"no tokenizer file at {path!r}; give a folder with vocab.txt or "
                             f"{TOKENIZER_JSON_NAME}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TokenizerError(f"{path!r} is not JSON ({error}); fix it, or put a vocab.txt beside it") from None
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokenizerError(f"{path!r} has no \"model\" object; it is not a tokenizer.json")
    tokens, max_chars = _read_wordpiece(data["model"], path)
    settings = {"max_input_chars_per_word": max_chars, **_read_normalizer(data.get("normalizer"), path)}
    _check_pre_tokenizer(data.get("pre_tokenizer"), path)
    _check_added_tokens(data.get("added_tokens") or [], tokens, path)
    return tokens, settings


def _read_wordpiece(model, path):
    """The vocabulary (a list, id = position) and max_input_chars_per_word of a WordPiece "model"."""
    kind = model.get("type")
    if kind != "WordPiece":
        raise TokenizerError(f"{path!r} describes a {kind} tokenizer; minibert reads BERT's WordPiece only "
                             "(a BPE or Unigram vocabulary belongs to another kind of model, e.g. GPT-2 or T5)")
    unknown = model.get("unk_token", UNK_TOKEN)
    prefix = model.get("continuing_subword_prefix", CONTINUATION_PREFIX)
    if unknown != UNK_TOKEN or prefix != CONTINUATION_PREFIX:
        raise TokenizerError(f"{path!r} uses unk_token {unknown!r} and continuing_subword_prefix {prefix!r}; "
                             f"minibert's BERT tokenizer has {UNK_TOKEN!r} and {CONTINUATION_PREFIX!r} only")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise TokenizerError(f"{path!r}: the WordPiece model has no vocab (an object token -> id)")
    ids = sorted(vocab.values()) if all(isinstance(i, int) for i in vocab.values()) else None
    if ids != list(range(len(vocab))):
        raise TokenizerError(f"{path!r}: the vocab's ids must be 0, 1, ..., {len(vocab) - 1}, each once; "
                             "the file is damaged")
    tokens = sorted(vocab, key=vocab.__getitem__)
    max_chars = model.get("max_input_chars_per_word", 100)
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1:
        raise TokenizerError(f"{path!r}: max_input_chars_per_word must be a positive integer, got "
                             f"{max_chars!r}")
    return tokens, max_chars


def _read_normalizer(normalizer, path):
    """BertNormalizer's settings as BertTokenizer's do_lower_case and strip_accents."""
    kind = normalizer.get("type") if isinstance(normalizer, dict) else None
    if kind != "BertNormalizer":
        raise TokenizerError(f"{path!r} has normalizer {kind!r}; minibert implements BERT's "
                             "(BertNormalizer) only, so it would not give the ids this file's owner expects")
    # clean_text and handle_chinese_chars are always on in BERT's basic tokenizer (basic.py, steps 2 and 4).
    for key in ("clean_text", "handle_chinese_chars"):
        if normalizer.get(key, True) is not True:
            raise TokenizerError(f"{path!r} turns the normalizer's {key} off; minibert's basic tokenizer "
                                 "always does it, as BERT does")
    lowercase, strip_accents = normalizer.get("lowercase", True), normalizer.get("strip_accents")
    if not isinstance(lowercase, bool) or strip_accents not in (None, True, False):
        raise TokenizerError(f"{path!r}: the normalizer's lowercase must be true or false and strip_accents "
                             f"true, false or null, got {lowercase!r} and {strip_accents!r}")
    # null strip_accents follows lowercase, in the Rust normaliser as in BertTokenizer (and here).
    return {"do_lower_case": lowercase, "strip_accents": strip_accents}


def _check_pre_tokenizer(pre_tokenizer, path):
    kind = pre_tokenizer.get("type") if isinstance(pre_tokenizer, dict) else None
    if kind != "BertPreTokenizer":
        raise TokenizerError(f"{path!r} has pre_tokenizer {kind!r}; minibert splits words as BERT does "
                             "(BertPreTokenizer: whitespace and punctuation) only")


def _check_added_tokens(added_tokens, tokens, path):
    """Added tokens must be BERT's specials at their vocabulary ids: others would need matching of their own."""
    for added in added_tokens:
        content, token_id = (added.get("content"), added.get("id")) if isinstance(added, dict) else (added, None)
        in_place = isinstance(token_id, int) and 0 <= token_id < len(tokens) and tokens[token_id] == content
        if content not in SPECIAL_TOKENS or not in_place:
            raise TokenizerError(f"{path!r} adds the token {content!r} (id {token_id!r}); minibert's BERT "
                                 f"tokenizer knows only the special tokens {' '.join(SPECIAL_TOKENS)}, each "
                                 "at its vocabulary id")
