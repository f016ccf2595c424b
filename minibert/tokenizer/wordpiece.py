"""WordPiece: split one word into the longest vocabulary pieces, left to right.

`unaffable` with a vocabulary holding `un`, `##aff`, `##able` -> `un ##aff ##able`. A piece that does not
start the word carries the `##` prefix, so `##ing` (the end of `playing`) and `ing` (a word of its own) are
different tokens. The algorithm is greedy (Google's `WordpieceTokenizer`; Wu et al. 2016, section 4.1): at
each position take the longest piece the vocabulary has. If some position has no piece at all, the whole
word becomes `[UNK]` -- not just the part that failed -- so that an unknown word costs one position, not
several.
"""

from minibert.errors import TokenizerError

CONTINUATION_PREFIX = "##"

# Words seen most often in text are few, and a cache hit skips the whole greedy search: the cache is the
# biggest single speed-up of tokenization. Its size is capped so that a stream of unique strings (random text,
# a 10 MB line) cannot grow it without bound.
_CACHE_LIMIT = 200_000


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece over a vocabulary (any container of token strings)."""

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=100):
        if unk_token not in vocab:
            raise TokenizerError(f"the unknown token {unk_token!r} is not in the vocabulary; add it")
        if max_input_chars_per_word < 1:
            raise TokenizerError(f"max_input_chars_per_word must be >= 1, got {max_input_chars_per_word}")
        self.vocab = vocab
        self.unk_token = unk_token
        # 100 in HuggingFace, 200 in Google's code: a longer "word" is almost surely not a word (a URL,
        # base64, a DNA string) and would only cost time.
        self.max_input_chars_per_word = max_input_chars_per_word
        # No piece is longer than the longest vocabulary entry, so the search never needs to try longer ones.
        self._longest_piece = max(
            (len(token) - len(CONTINUATION_PREFIX) if token.startswith(CONTINUATION_PREFIX) else len(token))
            for token in vocab
        )
        self._cache = {}

    def tokenize(self, text):
        """Whitespace-separated words (the output of the basic tokenizer) -> WordPiece tokens."""
        return self.tokenize_words(text.split())

    def tokenize_words(self, words):
        """A list of words -> their WordPiece tokens, one list. The hot loop of tokenization."""
        tokens = []
        cache = self._cache
        for word in words:
            pieces = cache.get(word)  # looked up here too: saves a function call per word
            if pieces is None:
                pieces = self.tokenize_word(word)
            tokens += pieces
        return tokens

    def tokenize_word(self, word):
        """One word -> its pieces, e.g. `playing` -> (`play`, `##ing`); a tuple, shared through the cache."""
        pieces = self._cache.get(word)
        if pieces is None:
            pieces = self._segment(word)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = pieces
        return pieces

    def _segment(self, word):
        # BEGIN EXERCISE wordpiece_longest_match: longest piece first from each start (## after 0); else [UNK]
        if len(word) > self.max_input_chars_per_word:
            return (self.unk_token,)
        vocab = self.vocab
        pieces = []
        start = 0
        while start < len(word):
            # Try the longest candidate first, shrinking from the right until the vocabulary has it.
            end = min(len(word), start + self._longest_piece)
            while end > start:
                piece = word[start:end] if start == 0 else CONTINUATION_PREFIX + word[start:end]
                if piece in vocab:
                    break
                end -= 1
            else:
                return (self.unk_token,)
            pieces.append(piece)
            start = end
        return tuple(pieces)
        # END EXERCISE
