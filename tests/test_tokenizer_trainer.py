"""Tests of the WordPiece trainer (minibert/tokenizer/trainer.py) and the `vocab` command."""

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.cli import main as cli_main
from minibert.errors import TokenizerError
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer, load_vocab, train_wordpiece
from minibert.tokenizer.trainer import learn_wordpiece

# The example of HuggingFace's course on WordPiece: small enough to run the learner on paper.
HUG_COUNTS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
HUG_ALPHABET = ["b", "h", "p", "##g", "##n", "##s", "##u"]

MIXED_LINES = [
    "The tokenizer splits words into pieces; the tokenizer is greedy.",
    "Playing, played, plays: the player likes playing.",
    "Café crème and naïve résumé, déjà vu.",
    "我喜欢猫。小明给小红一本书。这部电影真好看！",
    "BERT模型在2018年发布，tokenizer 很重要。",
    "Numbers 3.14 and 42, symbols $ ^ ` and emoji 😀.",
] * 3


def write_corpus(tmp_path, lines, name="corpus.txt"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_first_merges_by_ratio_score_worked_by_hand():
    """score="ratio": c(##g ##s)=5, c(##g)=20, c(##s)=5: score 5/(20*5)=0.05, the best, so `##gs` comes first.
    Then every pair with ##u scores 1/36 (each part occurs only next to ##u): the tie goes to the most
    frequent, p ##u (17). Then h ##u, b ##u and ##u ##gs tie at 1/19; h ##u (15) is the most frequent."""
    vocab = learn_wordpiece(HUG_COUNTS, vocab_size=len(SPECIAL_TOKENS) + len(HUG_ALPHABET) + 3, score="ratio")
    assert vocab == [*SPECIAL_TOKENS, *HUG_ALPHABET, "##gs", "pu", "hu"]


def test_first_merge_by_likelihood_gain_worked_by_hand():
    """score="likelihood": N = 10*3 + 5*3 + 12*3 + 4*3 + 5*4 = 113 pieces, c(##u)=36. The gain
    c(ab)·ln(c(ab)·N / (c(a)·c(b))) is 20·ln(20·113/(36·20)) = 22.9 for ##u ##g, against 17·ln(17·113/(17·36))
    = 19.4 for p ##u, 16·ln(16·113/(36·16)) = 18.3 for ##u ##n and 5·ln(5·113/(20·5)) = 8.7 for ##g ##s:
    unlike the ratio, the frequent pair comes first."""
    vocab = learn_wordpiece(HUG_COUNTS, vocab_size=len(SPECIAL_TOKENS) + len(HUG_ALPHABET) + 1)
    assert vocab[-1] == "##ug"


def test_unknown_score_is_an_error():
    with pytest.raises(TokenizerError, match="'bpe'"):
        learn_wordpiece(HUG_COUNTS, vocab_size=100, score="bpe")


def test_min_frequency_forbids_rare_pairs():
    """With min_frequency=6 the pair ##g ##s (seen 5 times) is never merged. The pairs seen 6+ times,
    h ##u (15), p ##u (17), ##u ##n (16) and ##u ##g (20), score 1/36: the most frequent, ##u ##g, wins."""
    vocab = learn_wordpiece(HUG_COUNTS, vocab_size=100, min_frequency=6, score="ratio")
    assert "##gs" not in vocab
    assert vocab[len(SPECIAL_TOKENS) + len(HUG_ALPHABET)] == "##ug"


def test_specials_come_first_in_bert_order(tmp_path):
    """[PAD] [UNK] [CLS] [SEP] [MASK] take ids 0-4, so [PAD] is 0 as in BERT."""
    tokens = train_wordpiece([write_corpus(tmp_path, MIXED_LINES)], 200)
    assert tokens[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert len(tokens) == len(set(tokens)) <= 200


def test_trainer_is_deterministic(tmp_path):
    """Two runs on the same corpus give the same vocabulary, token for token."""
    corpus = write_corpus(tmp_path, MIXED_LINES)
    assert train_wordpiece([corpus], 150) == train_wordpiece([corpus], 150)


def test_vocabulary_covers_its_training_text(tmp_path):
    """Every character seen is kept, so the tokenizer needs no [UNK] on the text it was trained on, even with
    a vocabulary too small for whole words."""
    corpus = write_corpus(tmp_path, MIXED_LINES)
    for do_lower_case in (True, False):
        out = tmp_path / f"vocab_{do_lower_case}.txt"
        train_wordpiece([corpus], 160, out=out, do_lower_case=do_lower_case)
        tokenizer = BertTokenizer(out, do_lower_case=do_lower_case)
        for line in MIXED_LINES:
            assert "[UNK]" not in tokenizer.tokenize(line), line


def test_frequent_word_becomes_one_token(tmp_path):
    """A word seen 40 times among rarer ones is learned whole."""
    lines = ["the tokenizer reads text", "a tokenizer splits words", "every tokenizer has a vocabulary"] * 40
    lines += ["rare words: quixotic zephyr jubilant"]
    out = tmp_path / "vocab.txt"
    train_wordpiece([write_corpus(tmp_path, lines)], 120, out=out)
    assert BertTokenizer(out).tokenize("Tokenizer") == ["tokenizer"]


def test_cjk_characters_stay_single(tmp_path):
    """CJK characters are words of their own, so no learned token holds two of them."""
    tokens = train_wordpiece([write_corpus(tmp_path, MIXED_LINES * 5)], 300)
    cjk_tokens = [token for token in tokens if any("\u4e00" <= char <= "\u9fff" for char in token)]
    assert "猫" in cjk_tokens
    assert all(len(token.removeprefix("##")) == 1 for token in cjk_tokens)


def test_vocab_size_too_small_for_the_alphabet_is_an_error(tmp_path):
    """The alphabet must fit: the error says how large the vocabulary must at least be."""
    with pytest.raises(TokenizerError, match=r"cannot hold .* use at least \d+"):
        train_wordpiece([write_corpus(tmp_path, MIXED_LINES)], 20)


def test_corpus_that_is_not_utf8_is_an_error(tmp_path):
    """A Latin-1 file is reported by name, not as a UnicodeDecodeError deep inside."""
    path = tmp_path / "latin1.txt"
    path.write_bytes("café crème\n".encode("latin-1"))
    with pytest.raises(TokenizerError, match="not UTF-8"):
        train_wordpiece([path], 100)


def reference_wordpiece(word_counts, vocab_size, min_frequency, score):
    """The learner with nothing incremental: recount every pair and symbol before each merge."""
    words = {word: [word[0]] + ["##" + char for char in word[1:]] for word in word_counts}
    total = sum(len(word) * count for word, count in word_counts.items())  # N: the pieces before any merge
    alphabet = sorted({symbol for pieces in words.values() for symbol in pieces},
                      key=lambda token: (token.startswith("##"), token))
    vocab = [*SPECIAL_TOKENS, *alphabet]
    while len(vocab) < vocab_size:
        symbol_freq, pair_freq = Counter(), Counter()
        for word, pieces in words.items():
            for symbol in pieces:
                symbol_freq[symbol] += word_counts[word]
            for pair in zip(pieces, pieces[1:], strict=False):
                pair_freq[pair] += word_counts[word]
        if score == "ratio":
            scores = {(a, b): freq / (symbol_freq[a] * symbol_freq[b]) for (a, b), freq in pair_freq.items()}
        else:
            scores = {(a, b): freq * math.log(freq * total / (symbol_freq[a] * symbol_freq[b]))
                      for (a, b), freq in pair_freq.items()}
        candidates = [(-scores[a, b], -freq, a, b) for (a, b), freq in pair_freq.items() if freq >= min_frequency]
        if not candidates:
            break
        _, _, left, right = min(candidates)
        merged = left + right[2:]
        if merged not in vocab:
            vocab.append(merged)
        for word, pieces in words.items():
            new, i = [], 0
            while i < len(pieces):
                if pieces[i:i + 2] == [left, right]:
                    new.append(merged)
                    i += 2
                else:
                    new.append(pieces[i])
                    i += 1
            words[word] = new
    return vocab


@given(st.dictionaries(st.text("abcd", min_size=1, max_size=6), st.integers(1, 6), min_size=1, max_size=12),
       st.integers(0, 25), st.integers(1, 3), st.sampled_from(["likelihood", "ratio"]))
def test_incremental_counts_match_recounting_everything(word_counts, extra_tokens, min_frequency, score):
    """The fast learner (incremental counts, a lazy heap) picks exactly the merges of a learner that recounts
    the whole corpus before every merge."""
    alphabet_size = len({char if i == 0 else "##" + char
                         for word in word_counts for i, char in enumerate(word)})
    vocab_size = len(SPECIAL_TOKENS) + alphabet_size + extra_tokens
    assert learn_wordpiece(word_counts, vocab_size, min_frequency, score=score) == reference_wordpiece(
        word_counts, vocab_size, min_frequency, score)


def test_vocab_command_writes_a_vocab_file(tmp_path, capsys):
    """`python -m minibert vocab --corpus F --size N --out V` writes a loadable vocab.txt of N tokens."""
    out = tmp_path / "vocab.txt"
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["vocab", "--corpus", str(write_corpus(tmp_path, MIXED_LINES)), "--size", "180",
                  "--out", str(out), "--no-lower-case"])
    assert exit_info.value.code == 0
    assert len(load_vocab(out)) == 180
    assert "C" in load_vocab(out) and "##é" in load_vocab(out)  # --no-lower-case kept case and accents
    assert "wrote 180 tokens" in capsys.readouterr().out


def test_vocab_command_says_why_it_wrote_fewer_tokens_than_asked(tmp_path, capsys):
    """A corpus that runs out of pairs before --size (and a word too long to learn) is told, not left to
    guess from a short vocab.txt."""
    corpus = write_corpus(tmp_path, ["tea cup tea cup", "x" * 101])
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["vocab", "--corpus", str(corpus), "--size", "500", "--out", str(tmp_path / "v.txt")])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()
    assert len(load_vocab(tmp_path / "v.txt")) < 500
    assert "500 were asked for" in captured.out and "--min-frequency" in captured.out
    assert "left out 1 distinct words longer than 100 characters" in captured.err


def test_vocab_command_reports_a_missing_corpus_in_one_line(tmp_path, capsys):
    """A corpus path that does not exist: exit status 2 and a readable `error:` line, no traceback."""
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["vocab", "--corpus", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "v.txt")])
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err
