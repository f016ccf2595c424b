"""Learn a WordPiece vocabulary from text: start from characters, merge the best pair, repeat.

The learner of Schuster & Nakajima (2012), which BERT's WordPiece comes from; its steps are listed below.
"""

# 1. Split the corpus into words with the basic tokenizer and count each distinct word.
# 2. Spell every word in characters, later ones with `##`: `cats` -> `c ##a ##t ##s`. These characters are the
#    first vocabulary; every character seen stays in it, so the tokenizer never needs [UNK] on its training
#    text. CJK characters are words of their own (the basic tokenizer splits them), so they stay single.
# 3. Merge the adjacent pair (a, b) that most increases the likelihood of the corpus under a unigram model of
#    the pieces (Schuster & Nakajima's criterion). Writing each occurrence of ab as one unit instead of two
#    changes the log-likelihood by about
#
#        freq(ab) * log(freq(ab) * N / (freq(a) * freq(b)))          (score="likelihood", the default)
#
#    with N the number of pieces in the corpus (held at its starting value, so scores only move when counts of
#    a, b or ab do). The log term prefers pairs whose parts rarely appear apart (`##q ##u`); the factor freq(ab)
#    says how many times the gain is collected, so frequent words (`the`, `return`) become single pieces.
#    HuggingFace's course describes the log term alone, as the ratio freq(ab) / (freq(a) * freq(b))
#    (score="ratio"). On its own it spends the vocabulary on rare pairs (numbers, names seen twice) and never
#    merges the most frequent letters: trained on pydocs, an 8k "ratio" vocabulary split `the` into `th ##e`
#    and made `##e` a fifth of all masked-LM targets. Pairs seen fewer than `min_frequency` times are never
#    merged.
# 4. Stop at `vocab_size` tokens, or when no pair is left.

import heapq
import itertools
import math
from collections import Counter

from minibert.errors import TokenizerError
from minibert.tokenizer.basic import BasicTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS, save_vocab
from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX

_LINES_PER_CHUNK = 10_000  # lines tokenized in one call: fewer calls, bounded memory
_PROGRESS_EVERY = 1000  # merges between two progress messages


def likelihood_gain(pair_freq, left_freq, right_freq, total):
    """About how much the corpus' log-likelihood grows when every occurrence of the pair becomes one piece."""
    return pair_freq * math.log(pair_freq * total / (left_freq * right_freq))


def frequency_ratio(pair_freq, left_freq, right_freq, total):
    """The log term of likelihood_gain without the log and without the count: how tied the parts are."""
    return pair_freq / (left_freq * right_freq)


SCORES = {"likelihood": likelihood_gain, "ratio": frequency_ratio}


def count_words(files, do_lower_case=True, strip_accents=None):
    """Counter of the words the basic tokenizer finds in the text files (UTF-8, read line by line)."""
    basic = BasicTokenizer(do_lower_case, never_split=SPECIAL_TOKENS, strip_accents=strip_accents)
    counts = Counter()
    for path in [files] if isinstance(files, (str, bytes)) or hasattr(files, "__fspath__") else files:
        try:
            with open(path, encoding="utf-8") as file:
                while chunk := list(itertools.islice(file, _LINES_PER_CHUNK)):
                    counts.update(basic.tokenize("".join(chunk)))
        except UnicodeDecodeError as error:
            raise TokenizerError(f"{path} is not UTF-8 text ({error}); convert it to UTF-8 first") from None
    for token in SPECIAL_TOKENS:  # already in every vocabulary, not material to learn from
        counts.pop(token, None)
    return counts


def train_wordpiece(
    files,
    vocab_size,
    min_frequency=2,
    out=None,
    do_lower_case=True,
    strip_accents=None,
    max_input_chars_per_word=100,
    progress=None,
    score="likelihood",
):
    """Train a WordPiece vocabulary on text files, write it to `out` (a vocab.txt) if given, return it.

    The tokens come in id order: the special tokens (`[PAD]` = 0), the characters, then the merged pieces in
    the order they were learned. do_lower_case and strip_accents must match the tokenizer that will use the
    vocabulary.
    `progress`, if given, is called with a one-line message now and then (e.g. `print`).
    `score` chooses the merge criterion: "likelihood" (default) or "ratio" (see the module's docstring).
    """
    counts = count_words(files, do_lower_case, strip_accents)
    if not counts:  # a vocabulary of the special tokens alone could tokenize nothing but [UNK]
        raise TokenizerError("no words to learn from: the text is empty, or holds only whitespace, special "
                             "tokens or invisible characters; give a corpus with text")
    if progress:
        progress(f"counted {sum(counts.values()):,} words, {len(counts):,} distinct")
    tokens = learn_wordpiece(counts, vocab_size, min_frequency, max_input_chars_per_word, progress, score)
    if out is not None:
        save_vocab(tokens, out)
    return tokens


def learn_wordpiece(word_counts, vocab_size, min_frequency=2, max_input_chars_per_word=100, progress=None,
                    score="likelihood"):
    """The learner itself, on a mapping word -> count. Returns the vocabulary as a token list (id order)."""
    if min_frequency < 1:
        raise TokenizerError(f"min_frequency must be at least 1, got {min_frequency}")
    if score not in SCORES:
        raise TokenizerError(f"score={score!r} is not a merge criterion; use one of {sorted(SCORES)}")
    score_of = SCORES[score]
    # Symbols are numbered; a word is a list of symbol numbers. Strings only come back at the end.
    alphabet = sorted(
        {char if i == 0 else CONTINUATION_PREFIX + char for word in word_counts
         for i, char in enumerate(word)},
        key=lambda token: (token.startswith(CONTINUATION_PREFIX), token),
    )
    if vocab_size < len(SPECIAL_TOKENS) + len(alphabet):
        raise TokenizerError(
            f"vocab_size={vocab_size} cannot hold the {len(SPECIAL_TOKENS)} special tokens and the "
            f"{len(alphabet)} characters of the corpus; use at least {len(SPECIAL_TOKENS) + len(alphabet)}"
        )
    symbols = list(alphabet)  # symbol number -> string
    symbol_ids = {symbol: i for i, symbol in enumerate(symbols)}
    # Words longer than the tokenizer's limit become [UNK] whatever the vocabulary: they teach nothing. One-
    # character words have no pair to merge, but they count in their symbol's frequency.
    kept = [(word, count) for word, count in word_counts.items() if len(word) <= max_input_chars_per_word]
    if progress and len(kept) < len(word_counts):
        progress(f"left out {len(word_counts) - len(kept):,} distinct words longer than {max_input_chars_per_word} "
                 f"characters: the tokenizer reads each as one [UNK]")
    words = [[symbol_ids[word[0]]] + [symbol_ids[CONTINUATION_PREFIX + char] for char in word[1:]]
             for word, _ in kept]
    counts = [count for _, count in kept]

    # Speed: a merge changes few counts, so nothing is recounted. Each merge visits only the words that hold the
    # pair (an index pair -> words) and updates the counts of the pairs around it. A heap finds the best pair.
    # When a symbol's frequency drops, the scores of all pairs holding it rise, and those pairs are pushed again.
    # An entry whose stored score no longer matches is stale, and is re-scored when it reaches the top.
    symbol_freq = [0] * len(symbols)
    pair_freq = Counter()
    pair_words = {}  # pair -> indices of the words that hold it (a superset: checked when used)
    symbol_pairs = [set() for _ in symbols]  # symbol -> the live pairs it is part of
    for index, (word, count) in enumerate(zip(words, counts, strict=True)):
        for symbol in word:
            symbol_freq[symbol] += count
        for pair in itertools.pairwise(word):
            pair_freq[pair] += count
            pair_words.setdefault(pair, set()).add(index)
    for left, right in pair_freq:
        symbol_pairs[left].add((left, right))
        symbol_pairs[right].add((left, right))

    total = sum(symbol_freq)  # N of the likelihood score, held at its starting value

    def entry(pair):
        """Heap entry: best score first; on a tie the more frequent pair, then alphabetical order."""
        left, right = pair
        freq = pair_freq[pair]
        return (-score_of(freq, symbol_freq[left], symbol_freq[right], total), -freq,
                symbols[left], symbols[right], pair)

    heap = [entry(pair) for pair, freq in pair_freq.items() if freq >= min_frequency]
    heapq.heapify(heap)

    vocab = [*SPECIAL_TOKENS, *alphabet]
    in_vocab = set(vocab)
    merges = 0
    while len(vocab) < vocab_size and heap:
        top = heapq.heappop(heap)
        pair = top[-1]
        if pair_freq.get(pair, 0) < min_frequency:
            continue  # merged away, or too rare now; pushed again if it ever gains occurrences
        current = entry(pair)
        if current != top:
            heapq.heappush(heap, current)  # stale: its counts changed since it was pushed
            continue

        left, right = pair
        merged_string = symbols[left] + symbols[right][len(CONTINUATION_PREFIX):]
        merged = symbol_ids.get(merged_string)
        if merged is None:  # the same string can come from two different pairs: one symbol
            merged = symbol_ids[merged_string] = len(symbols)
            symbols.append(merged_string)
            symbol_freq.append(0)
            symbol_pairs.append(set())
        if merged_string not in in_vocab:
            in_vocab.add(merged_string)
            vocab.append(merged_string)

        changes = Counter()  # pair -> change in its frequency, over all the words touched
        for index in pair_words.pop(pair):
            old = words[index]
            new = _merge_pair(old, left, right, merged)
            if new is None:
                continue
            count = counts[index]
            for old_pair in itertools.pairwise(old):
                changes[old_pair] -= count
            for new_pair in itertools.pairwise(new):
                changes[new_pair] += count
                pair_words.setdefault(new_pair, set()).add(index)
            times = (len(old) - len(new)) * count
            symbol_freq[left] -= times
            symbol_freq[right] -= times
            symbol_freq[merged] += times
            words[index] = new

        # Scores that may have gone up: pairs holding `left` or `right` (a part got rarer, or, for an
        # anti-associated pair under "likelihood", its own count fell; every pair that lost occurrences holds
        # one of them). Scores that went down are caught lazily when their entry reaches the top.
        rescored = set(symbol_pairs[left]) | symbol_pairs[right]
        for changed_pair, change in changes.items():
            if change == 0:
                continue
            freq = pair_freq[changed_pair] = pair_freq[changed_pair] + change
            if freq == 0:
                del pair_freq[changed_pair]
                pair_words.pop(changed_pair, None)
                symbol_pairs[changed_pair[0]].discard(changed_pair)
                symbol_pairs[changed_pair[1]].discard(changed_pair)
                rescored.discard(changed_pair)
            else:
                symbol_pairs[changed_pair[0]].add(changed_pair)
                symbol_pairs[changed_pair[1]].add(changed_pair)
                if change > 0:
                    rescored.add(changed_pair)
        for rescored_pair in rescored:
            if pair_freq[rescored_pair] >= min_frequency:
                heapq.heappush(heap, entry(rescored_pair))

        merges += 1
        if progress and merges % _PROGRESS_EVERY == 0:
            progress(f"{merges:,} merges, {len(vocab):,}/{vocab_size:,} tokens, last {merged_string!r}")
    if progress:
        progress(f"done: {len(vocab):,} tokens after {merges:,} merges")
    return vocab


def _merge_pair(word, left, right, merged):
    """`word` with each (left, right), left to right, replaced by `merged`; None if the pair is absent."""
    new = []
    i = 0
    found = False
    while i < len(word):
        if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
            new.append(merged)
            i += 2
            found = True
        else:
            new.append(word[i])
            i += 1
    return new if found else None
