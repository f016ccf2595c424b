"""The special tokens of one vocabulary, as the pretraining data needs them.

BERT's input `[CLS] A [SEP] B [SEP]` and its masking routine need a handful of ids: `[CLS]` and `[SEP]` to
build a sequence, `[PAD]` to fill it, `[MASK]` to hide a token. Any token written in brackets (`[UNK]`,
`[unused7]`) is special too: the masking routine never draws one as a "random token" (Google draws from the
whole vocabulary, specials included; a random `[CLS]` in the middle of a sentence teaches the model nothing).

The ids are all the data pipeline needs of the vocabulary, so the shard manifest stores this object rather
than a path to vocab.txt: the batch iterator can mask without loading the tokenizer.
"""

import numpy as np

from minibert.errors import DataError


def is_special_token(token):
    """A token like `[CLS]` or `[unused3]`: a bracketed name, never a piece of text."""
    return len(token) > 2 and token.startswith("[") and token.endswith("]")


class SpecialTokens:
    """The ids of `[CLS] [SEP] [PAD] [MASK]` and of every other bracketed token of a vocabulary."""

    def __init__(self, vocab_size, cls_id, sep_id, pad_id, mask_id, special_ids):
        self.vocab_size = int(vocab_size)
        self.cls_id, self.sep_id = int(cls_id), int(sep_id)
        self.pad_id, self.mask_id = int(pad_id), int(mask_id)
        self.special_ids = np.unique(np.asarray(special_ids, dtype=np.int32))
        # The masking routine never chooses these positions: they carry the layout, not text (Google skips
        # [CLS] and [SEP]; padding is not part of the sequence at all).
        self.never_mask_ids = np.array([self.cls_id, self.sep_id, self.pad_id], dtype=np.int32)
        # The pool of the "10% random token" replacement: every id that is not special.
        self.random_token_ids = np.setdiff1d(np.arange(self.vocab_size, dtype=np.int32), self.special_ids)
        if self.random_token_ids.size == 0:
            raise DataError("the vocabulary has only special tokens; train it on some text first")

    @classmethod
    def from_tokenizer(cls, tokenizer):
        """From a `BertTokenizer` (its vocabulary loader has already checked that the specials are there)."""
        return cls(
            vocab_size=tokenizer.vocab_size, cls_id=tokenizer.cls_token_id, sep_id=tokenizer.sep_token_id,
            pad_id=tokenizer.pad_token_id, mask_id=tokenizer.mask_token_id,
            special_ids=[index for token, index in tokenizer.vocab.items() if is_special_token(token)])

    def to_dict(self):
        """A JSON-friendly dict, for the shard manifest."""
        return {"vocab_size": self.vocab_size, "cls_id": self.cls_id, "sep_id": self.sep_id,
                "pad_id": self.pad_id, "mask_id": self.mask_id, "special_ids": self.special_ids.tolist()}

    @classmethod
    def from_dict(cls, fields):
        return cls(**fields)
