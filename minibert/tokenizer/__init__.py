"""BERT's WordPiece tokenizer: text -> tokens -> ids, and a trainer for new vocabularies.

basic.py           cleaning, case and accents, punctuation and CJK splitting (BERT's basic tokenizer)
wordpiece.py       greedy longest-match-first WordPiece on one word
vocab.py           vocab.txt files and the special tokens
tokenizer_json.py  HuggingFace's tokenizer.json read as a WordPiece vocabulary and its settings
trainer.py         learning a WordPiece vocabulary from text
bert_tokenizer.py  BertTokenizer: the pipeline, ids and model inputs
"""

from minibert.tokenizer.basic import BasicTokenizer
from minibert.tokenizer.bert_tokenizer import BertTokenizer
from minibert.tokenizer.trainer import train_wordpiece
from minibert.tokenizer.vocab import (
    CLS_TOKEN,
    MASK_TOKEN,
    PAD_TOKEN,
    SEP_TOKEN,
    SPECIAL_TOKENS,
    UNK_TOKEN,
    load_vocab,
    save_vocab,
)
from minibert.tokenizer.wordpiece import WordpieceTokenizer

__all__ = [
    "BasicTokenizer",
    "BertTokenizer",
    "WordpieceTokenizer",
    "train_wordpiece",
    "load_vocab",
    "save_vocab",
    "SPECIAL_TOKENS",
    "PAD_TOKEN",
    "UNK_TOKEN",
    "CLS_TOKEN",
    "SEP_TOKEN",
    "MASK_TOKEN",
]
