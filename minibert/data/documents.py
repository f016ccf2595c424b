"""A Google-format corpus, streamed as tokenized documents with their whole-word boundaries.

The corpus format (one sentence per line, a blank line between documents) is read by
`minibert.data.corpora.corpus_file.iter_documents`; this module turns each line into a `Sentence`: its
WordPiece ids, and which tokens start a word, for whole-word masking.
"""

# Word starts. WordPiece marks the inside of an English word with `##` (`play ##ing`). Chinese has no such
# mark: BERT's basic tokenizer makes every CJK character its own token, so `一本书` and `一 本 书` tokenize the
# same, and Google's whole-word masking masks Chinese character by character (google-research/bert #780).
# The corpus can say more: our synthetic corpus writes a space between Chinese words (`小明 给 小红 一本 书`),
# as a word segmenter would (Cui et al. 2019, Chinese BERT-wwm, used LTP). So in a line that has a space
# between two Chinese characters, two characters form one word when they sit next to each other with no space
# between. A line with no such space is taken as unsegmented: each character is its own word, as in Google's
# code, since reading a whole run of characters as one word would mask whole clauses at once.

import numpy as np
import regex

from minibert.data.corpora.corpus_file import iter_documents
from minibert.data.instances import Sentence
from minibert.data.problems import LineSample

_HAN = regex.compile(r"\p{Han}")  # Chinese characters (the Han script)
_SEGMENTED = regex.compile(r"\p{Han}\s+\p{Han}")  # a space between two of them: the line marks its words


def word_starts_of(line, tokens):
    """(n,) bool: True where token k starts a word of `line` (see the comment at the top of this module)."""
    starts = np.array([not token.startswith("##") for token in tokens], dtype=bool)
    if not _SEGMENTED.search(line):
        return starts  # no Chinese, or Chinese without word boundaries: one character, one word
    # Find each single-character Chinese token in the line, in order; it continues the previous token's word
    # when that token was a Chinese character found just one position before it.
    search_from, previous_token, previous_position = 0, -2, -2
    for k, token in enumerate(tokens):
        if len(token) != 1 or not _HAN.match(token):
            continue
        position = line.find(token, search_from)
        if position < 0:  # changed by normalisation: treat it as a word of its own
            continue
        if previous_token == k - 1 and previous_position == position - 1:
            starts[k] = False
        search_from, previous_token, previous_position = position + 1, k, position
    return starts


def tokenize_sentence(line, tokenizer):
    """One corpus line -> `Sentence` (ids and word starts)."""
    tokens = tokenizer.tokenize(line)
    ids = np.array(tokenizer.convert_tokens_to_ids(tokens), dtype=np.int32)
    return Sentence(ids, word_starts_of(line, tokens))


def iter_tokenized_documents(path, tokenizer, max_sentence_tokens=None):
    """Yield each document of a corpus file as `(first_line, [Sentence, ...])`, streaming.

    Lines that give no token (only control characters, say) are skipped, as Google skips them. A sentence of
    more than `max_sentence_tokens` tokens gets one warning with file and line numbers at the end: it will
    be truncated, and losing its tail silently would hide a corpus with paragraphs instead of sentences.
    """
    long_lines = LineSample()
    for first_line, lines in iter_documents(path):
        sentences = []
        for line_number, line in enumerate(lines, start=first_line):
            sentence = tokenize_sentence(line, tokenizer)
            if not len(sentence.ids):
                continue
            if max_sentence_tokens is not None and len(sentence.ids) > max_sentence_tokens:
                long_lines.add(line_number)
            sentences.append(sentence)
        if sentences:
            yield first_line, sentences
    long_lines.warn(path, f"sentence(s) longer than {max_sentence_tokens} tokens, to be truncated to fit one "
                          "sequence", "put one sentence per line, or raise --max-seq-length")
