"""Exercise wordpiece_longest_match (lesson 07): `WordpieceTokenizer._segment` in
minibert/tokenizer/wordpiece.py.

Greedy longest-match-first: from the current position, take the longest piece the vocabulary has (with
`##` unless it starts the word); if no piece fits, the whole word is [UNK].
"""

from hypothesis import given
from hypothesis import strategies as st

from minibert.tokenizer import WordpieceTokenizer

VOCAB = {"[UNK]", "play", "##ing", "##in", "##g", "p", "##l", "##a", "##y", "un", "##aff", "##able", "a",
         "##b", "ab", "##ab", "猫", "b"}


def pieces(word, vocab=VOCAB, limit=100):
    return list(WordpieceTokenizer(vocab, max_input_chars_per_word=limit).tokenize_word(word))


def test_examples_by_hand():
    """playing -> play ##ing (longest first, not p ##l ##a ##y ...); unaffable -> un ##aff ##able."""
    assert pieces("playing") == ["play", "##ing"]
    assert pieces("unaffable") == ["un", "##aff", "##able"]
    assert pieces("playg") == ["play", "##g"]
    assert pieces("猫") == ["猫"]


def test_continuation_pieces_carry_the_prefix():
    """`ab` alone is the word piece `ab`; after `ab`, the same letters are the piece `##ab`."""
    assert pieces("abab") == ["ab", "##ab"]


def test_one_unknown_part_makes_the_whole_word_unk():
    """`playx` has no piece for `x`: the whole word becomes one [UNK], not `play [UNK]`."""
    assert pieces("playx") == ["[UNK]"]
    assert pieces("xplay") == ["[UNK]"]


def test_too_long_words_are_unk():
    """A word longer than max_input_chars_per_word is [UNK] without searching; one of exactly that length is
    still split (Google's tokenization.py tests `len(chars) > max_input_chars_per_word`)."""
    assert pieces("abab", limit=3) == ["[UNK]"]
    assert pieces("abab", limit=4) == ["ab", "##ab"]


def reference(word, vocab):
    """Longest match first, written the obvious way: try every end from the right."""
    out, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                out.append(piece)
                start = end
                break
        else:
            return ["[UNK]"]
    return out


@given(st.text(alphabet="abplyinguf", min_size=1, max_size=9))
def test_matches_the_definition_on_random_words(word):
    """On random words over a small alphabet, the pieces equal the obvious longest-match search."""
    assert pieces(word) == reference(word, VOCAB)
