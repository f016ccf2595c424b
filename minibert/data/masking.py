"""The masked-LM routine: which tokens BERT must predict, and what it sees in their place.

BERT paper §3.1 ("Task #1: Masked LM") and Google's `create_masked_lm_predictions`, in the steps listed below.

One call masks one sequence. `word_starts` marks the first token of each word: WordPiece's `##` pieces
and the characters of a Chinese word (whose boundaries come from the corpus, see documents.py) are not word
starts, so whole-word masking hides `play ##ing` or `一本` together, never half of it.

Shapes: L the length of one unpadded sequence, P the number of chosen positions (≤ max_predictions_per_seq).
"""

# 1. Count: `num_to_predict = min(max_predictions_per_seq, max(1, round(L * masked_lm_prob)))`, where L counts
#    every token of the sequence, [CLS] and [SEP] included (as Google does).
# 2. Candidates: every token but [CLS], [SEP] and [PAD], grouped into whole words when `whole_word` is on.
# 3. Shuffle the candidates and take them in that order; a word that would overshoot the count is skipped.
# 4. Each chosen token becomes [MASK] 80% of the time, a random non-special token 10%, and stays itself 10%.
#    Why not always [MASK]? Fine-tuning never shows [MASK], so a model that only learned "predict at [MASK]"
#    would have nothing to say about real tokens; the random and unchanged 10%s make it keep a good
#    representation of every token (paper §3.1 and appendix C.2).
# 5. The labels are the original ids at the chosen positions.

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.data.problems import warn
from minibert.errors import ConfigError


@dataclass(frozen=True)
class MaskingConfig:
    masked_lm_prob: float = 0.15  # share of each sequence to predict (BERT: 0.15)
    max_predictions_per_seq: int = 20  # cap on P (Google: 20 for 128-token sequences, 80 for 512)
    mask_token_prob: float = 0.8  # of the chosen tokens, the share replaced by [MASK]
    random_token_prob: float = 0.1  # of the chosen tokens, the share replaced by a random token
    whole_word: bool = True  # choose whole words (WordPiece ## pieces, Chinese corpus words) at once

    def __post_init__(self):
        if not 0.0 < self.masked_lm_prob < 1.0:
            raise ConfigError(f"masked_lm_prob={self.masked_lm_prob} must be in (0, 1); BERT uses 0.15")
        if self.max_predictions_per_seq < 1:
            raise ConfigError(f"max_predictions_per_seq={self.max_predictions_per_seq} must be at least 1")
        if self.mask_token_prob < 0 or self.random_token_prob < 0 or \
                self.mask_token_prob + self.random_token_prob > 1.0:
            raise ConfigError(
                f"mask_token_prob={self.mask_token_prob} and random_token_prob={self.random_token_prob} must "
                "be non-negative with a sum of at most 1 (the rest stays unchanged); BERT uses 0.8 and 0.1")

    def num_to_predict(self, length):
        """How many of a sequence's `length` tokens to choose (Python 3's round, as Google's code)."""
        return min(self.max_predictions_per_seq, max(1, int(round(length * self.masked_lm_prob))))

    def check_sequence_length(self, max_seq_length):
        """Warn when `max_predictions_per_seq` caps what `masked_lm_prob` asks of a full sequence."""
        wanted = int(round(max_seq_length * self.masked_lm_prob))
        if wanted > self.max_predictions_per_seq:
            warn(f"max_predictions_per_seq={self.max_predictions_per_seq} is smaller than the {wanted} "
                 f"predictions masked_lm_prob={self.masked_lm_prob} asks of a {max_seq_length}-token "
                 f"sequence; capping at {self.max_predictions_per_seq} "
                 f"(raise it to {wanted} to mask the full share)")


class MaskedSequence(NamedTuple):
    input_ids: np.ndarray  # (L,) int32, the sequence as the model sees it
    positions: np.ndarray  # (P,) int32, chosen positions in increasing order
    labels: np.ndarray  # (P,) int32, the original ids at those positions


def whole_word_units(input_ids, word_starts, never_mask_ids):
    """The candidate units of a sequence as (starts, ends) position arrays, each unit = input_ids[start:end].

    A special token is never a candidate, and a unit never runs across one: the token after [SEP] starts a
    unit even if it is a `##` piece left over from truncation.
    """
    candidate = ~np.isin(input_ids, never_mask_ids)  # (L,)
    starts = word_starts.copy()
    starts[~candidate] = True
    starts[1:] |= ~candidate[:-1]
    starts[0] = True
    unit_starts = np.flatnonzero(starts)
    unit_ends = np.append(unit_starts[1:], len(input_ids))
    keep = candidate[unit_starts]
    return unit_starts[keep], unit_ends[keep]


def create_masked_lm_predictions(input_ids, word_starts, rng, special_tokens, config):
    """Choose and hide the tokens to predict in one sequence; returns a `MaskedSequence`.

    input_ids: (L,) ints, an unpadded `[CLS] A [SEP] B [SEP]`; word_starts: (L,) bool, or None when every
    token is its own word; rng: a `numpy.random.Generator`; special_tokens: a `SpecialTokens`.
    """
    input_ids = np.asarray(input_ids, dtype=np.int32)
    if word_starts is None or not config.whole_word:
        word_starts = np.ones(len(input_ids), dtype=bool)
    unit_starts, unit_ends = whole_word_units(input_ids, np.asarray(word_starts, dtype=bool),
                                              special_tokens.never_mask_ids)
    num_to_predict = config.num_to_predict(len(input_ids))

    chosen_units, count = [], 0
    for unit in rng.permutation(len(unit_starts)):
        if count >= num_to_predict:
            break
        size = unit_ends[unit] - unit_starts[unit]
        if count + size > num_to_predict:  # Google skips a word that would overshoot, and tries the next
            continue
        chosen_units.append(unit)
        count += size
    positions = np.sort(np.concatenate(
        [np.arange(unit_starts[unit], unit_ends[unit]) for unit in chosen_units] or [np.zeros(0, int)]))
    positions = positions.astype(np.int32)  # (P,)
    labels = input_ids[positions]  # (P,)

    # One draw per chosen token (as Google, also for the tokens of one word): [MASK], random, or unchanged.
    # BEGIN EXERCISE mask_80_10_10: per position: [MASK], a random id, or unchanged
    draw = rng.random(len(positions))  # (P,)
    to_mask = draw < config.mask_token_prob
    to_random = ~to_mask & (draw < config.mask_token_prob + config.random_token_prob)
    masked_ids = input_ids.copy()
    masked_ids[positions[to_mask]] = special_tokens.mask_id
    random_ids = rng.choice(special_tokens.random_token_ids, size=int(to_random.sum()))
    masked_ids[positions[to_random]] = random_ids
    # END EXERCISE
    return MaskedSequence(masked_ids, positions, labels)
