"""Reading a corpus into tokenized documents (minibert/data/documents.py), with whole-word boundaries."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.documents import iter_tokenized_documents, tokenize_sentence, word_starts_of
from minibert.data.problems import DataWarning
from minibert.tokenizer import BertTokenizer

CHINESE = "小明给红一本书送了"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ENGLISH = ["the", "cat", "play", "##ing", "runs", "."]
TOKENIZER = BertTokenizer.from_vocab_list([*SPECIALS, *ENGLISH, "。", *CHINESE])


def test_wordpiece_pieces_join_their_word():
    """`playing` -> `play ##ing`: the `##` piece continues the word; every other token starts one."""
    tokens = TOKENIZER.tokenize("The cat playing.")
    assert tokens == ["the", "cat", "play", "##ing", "."]
    assert word_starts_of("The cat playing.", tokens).tolist() == [True, True, True, False, True]


def test_chinese_words_come_from_the_spaces_of_the_corpus():
    """`小明 给 小红 送 了 一本 书 。`: characters written together form one word (小明, 小红, 一本);
    the basic tokenizer alone would make each character a word (google-research/bert #780)."""
    line = "小明 给 小红 送 了 一本 书 。"
    sentence = tokenize_sentence(line, TOKENIZER)
    assert TOKENIZER.convert_ids_to_tokens(sentence.ids.tolist()) == list("小明给小红送了一本书。")
    assert sentence.word_starts.tolist() == [True, False, True, True, False, True, True, True, False, True,
                                             True]


def test_chinese_without_spaces_is_one_word_per_character():
    """`小明给小红送了一本书。` with no space between its characters gives no word boundaries: each character is
    its own word, as Google's code makes it, not one word per run of characters (which would hide whole
    clauses at once)."""
    line = "小明给小红送了一本书。"
    tokens = TOKENIZER.tokenize(line)
    assert word_starts_of(line, tokens).tolist() == [True] * len(tokens)
    tokens = TOKENIZER.tokenize("the cat 小明给")
    assert word_starts_of("the cat 小明给", tokens).tolist() == [True] * 5


@settings(derandomize=True, max_examples=40)
@given(words=st.lists(st.text(alphabet=CHINESE, min_size=1, max_size=3), min_size=2, max_size=10))
def test_each_chinese_word_is_one_unit(words):
    """Any sequence of two or more Chinese words joined by spaces: the word starts split the tokens back into
    exactly those words. (A line of one word has no space to show that it is segmented.)"""
    line = " ".join(words)
    sentence = tokenize_sentence(line, TOKENIZER)
    tokens = TOKENIZER.convert_ids_to_tokens(sentence.ids.tolist())
    units = np.split(np.array(tokens), np.flatnonzero(sentence.word_starts)[1:])
    assert ["".join(unit) for unit in units] == words


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_documents_split_at_blank_lines_and_skip_empty_lines(tmp_path):
    """Blank lines (one or several) end a document; a line that gives no token (only control characters)
    is dropped as Google drops it; the first line number of each document is reported."""
    corpus = write(tmp_path / "corpus.txt", "the cat.\ncat runs.\n\n\n\x07\nthe cat runs.\n\nplaying.\n")
    documents = list(iter_tokenized_documents(corpus, TOKENIZER))
    assert [first_line for first_line, _ in documents] == [1, 5, 8]
    assert [len(sentences) for _, sentences in documents] == [2, 1, 1]
    assert TOKENIZER.convert_ids_to_tokens(documents[2][1][0].ids.tolist()) == ["play", "##ing", "."]


def test_long_lines_warn_with_file_and_line(tmp_path):
    """Sentences longer than the limit give one warning naming the file, the first line and the count."""
    text = "the cat.\n" + "the cat runs. " * 5 + "\n\nthe.\n" + "cat " * 9 + "\n"
    corpus = write(tmp_path / "corpus.txt", text)
    with pytest.warns(DataWarning, match=r"corpus\.txt:2: 2 sentence\(s\) longer than 8 tokens.*lines 2, 5"):
        list(iter_tokenized_documents(corpus, TOKENIZER, max_sentence_tokens=8))
