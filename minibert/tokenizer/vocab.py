"""vocab.txt: Google's and HuggingFace's vocabulary file, one token per line, the id is the line number.

The file holds the special tokens too. BERT's own files put `[PAD]` on line 0 and `[UNK] [CLS] [SEP] [MASK]`
on lines 100-103 (lines 1-99 are `[unused]` slots); the files we train put all five first, in that order.
Reading checks what would otherwise fail much later: a missing special token, a duplicate (two lines, one
token: the second id could never be produced), an empty line, bytes that are not UTF-8 (or, from a
tokenizer.json, a lone surrogate).
"""

import hashlib
import os
from pathlib import Path

from minibert.errors import TokenizerError
from minibert.surrogates import holds_surrogate

PAD_TOKEN = "[PAD]"  # fills a batch's short sequences up to its length; the attention mask hides it
UNK_TOKEN = "[UNK]"  # a word WordPiece cannot spell with the vocabulary
CLS_TOKEN = "[CLS]"  # first token of every input; its output feeds the NSP and classification heads
SEP_TOKEN = "[SEP]"  # ends segment A and segment B
MASK_TOKEN = "[MASK]"  # stands in for a token the masked LM must predict

# In the order of their ids in the vocabularies we write, [PAD] = 0 as in BERT's.
SPECIAL_TOKENS = (PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)


def validate_vocab(tokens, source="the vocabulary"):
    """Check a token list (id = position) and return it as a dict token -> id, or raise TokenizerError."""
    if not tokens:
        raise TokenizerError(f"{source} is empty; a vocab.txt needs one token per line, specials included")
    vocab = {}
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TokenizerError(f"{source}: token {index} is a {type(token).__name__}, not a str: {token!r}")
        if not token:
            raise TokenizerError(f"{source}: line {index + 1} is empty; remove it (each line is a token)")
        if holds_surrogate(token):  # only a JSON escape makes one: a vocab.txt is read as UTF-8
            raise TokenizerError(f"{source}: token {index} {token!r} holds a lone surrogate, which is not text: "
                                 "no UTF-8 file can hold it, nor can HuggingFace's tokenizers (its strings are "
                                 "UTF-8); remove or fix that token")
        if token in vocab:
            raise TokenizerError(
                f"{source}: token {token!r} appears twice, on lines {vocab[token] + 1} and {index + 1}; "
                "each token must appear once"
            )
        vocab[token] = index
    missing = [token for token in SPECIAL_TOKENS if token not in vocab]
    if missing:
        raise TokenizerError(
            f"{source} lacks the special token(s) {' '.join(missing)}; BERT needs all of "
            f"{' '.join(SPECIAL_TOKENS)} (add them as lines, e.g. at the top)"
        )
    return vocab


def load_vocab(path):
    """Read a vocab.txt into a dict token -> id (the line number, from 0)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TokenizerError(f"no vocabulary file at {path}; give the path of a vocab.txt (a token a line)")
    try:
        with open(path, encoding="utf-8", newline="") as file:
            text = file.read()
    except UnicodeDecodeError as error:
        raise TokenizerError(f"{path} is not UTF-8 text ({error}); a vocab.txt must be UTF-8") from None
    # One token per line. Only the line break is removed (\n, or \r\n from Windows): a token may hold any
    # other character. Google's reader strips all whitespace; no token of BERT's vocabularies has any.
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line starts no new token
        lines.pop()
    tokens = [line[:-1] if line.endswith("\r") else line for line in lines]
    return validate_vocab(tokens, source=path)


def save_vocab(tokens, path):
    """Write tokens (a list in id order, or a dict token -> id) as a vocab.txt; returns the path."""
    if isinstance(tokens, dict):
        if sorted(tokens.values()) != list(range(len(tokens))):
            raise TokenizerError("the vocabulary's ids must be 0, 1, ..., size-1 with no gap (id = line)")
        tokens = sorted(tokens, key=tokens.__getitem__)
    tokens = list(tokens)
    validate_vocab(tokens, source="the vocabulary to save")
    if any("\n" in token or "\r" in token for token in tokens):
        raise TokenizerError("a token holds a line break and cannot be written one per line; remove it")
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        file.writelines(token + "\n" for token in tokens)
    return path


def vocab_fingerprint(path):
    """The sha256 of a vocab.txt's bytes: the same tokens in the same order, or not. A model's embedding
    row i belongs to the token on line i, so a vocabulary reordered (or edited) after training gives wrong
    words with no error; a checkpoint records this and loading compares it."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
