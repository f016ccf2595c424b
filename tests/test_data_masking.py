"""The masking routine (minibert/data/masking.py): Google's count, its candidates, the 80/10/10 split.

Statistical tests use a seeded generator and hypothesis with `derandomize=True`, so they are deterministic;
their bounds are 5 standard deviations of a binomial count (a correct routine fails one check with
probability about 6e-7), wide enough to never flake and narrow enough to catch a wrong split such as 90/5/5.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.masking import MaskingConfig, create_masked_lm_predictions, whole_word_units
from minibert.data.problems import DataWarning
from minibert.data.special_tokens import SpecialTokens
from minibert.errors import ConfigError

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = SpecialTokens(vocab_size=1000, cls_id=CLS, sep_id=SEP, pad_id=PAD, mask_id=MASK,
                        special_ids=[PAD, UNK, CLS, SEP, MASK])
FIVE_SIGMA = 5.0


def binomial_bound(probability, trials):
    """Half-width of the 5-sigma band of a binomial share: 5 * sqrt(p (1 - p) / n)."""
    return FIVE_SIGMA * math.sqrt(probability * (1 - probability) / trials)


def pair_sequence(rng, length_a, length_b):
    """[CLS] A [SEP] B [SEP] with random text ids (5..999)."""
    text = rng.integers(5, 1000, size=length_a + length_b)
    return np.concatenate([[CLS], text[:length_a], [SEP], text[length_a:], [SEP]]).astype(np.int32)


@settings(derandomize=True, max_examples=40)
@given(length_a=st.integers(1, 80), length_b=st.integers(1, 80), max_predictions=st.integers(1, 40),
       masked_lm_prob=st.sampled_from([0.05, 0.15, 0.3, 0.9]), seed=st.integers(0, 2**32 - 1))
def test_count_follows_googles_formula(length_a, length_b, max_predictions, masked_lm_prob, seed):
    """Without whole words, exactly min(max_predictions, max(1, round(L * p))) tokens are chosen (fewer only
    if there are fewer candidates than that), L counting [CLS] and both [SEP]."""
    rng = np.random.default_rng(seed)
    input_ids = pair_sequence(rng, length_a, length_b)
    config = MaskingConfig(masked_lm_prob, max_predictions, whole_word=False)
    masked = create_masked_lm_predictions(input_ids, None, rng, SPECIAL, config)
    length = length_a + length_b + 3
    expected = min(max_predictions, max(1, round(length * masked_lm_prob)), length_a + length_b)
    assert len(masked.positions) == expected


@settings(derandomize=True, max_examples=40)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), whole_word=st.booleans())
def test_special_tokens_never_chosen_and_labels_are_originals(data, seed, whole_word):
    """Whatever the sequence: no [CLS]/[SEP]/[PAD] position is chosen; labels are the original ids; positions
    are increasing; only chosen positions change, each into [MASK], itself or a non-special token."""
    rng = np.random.default_rng(seed)
    length = data.draw(st.integers(3, 60))
    input_ids = rng.integers(5, 1000, size=length).astype(np.int32)
    specials = data.draw(st.lists(st.integers(0, length - 1), max_size=length // 2))
    input_ids[specials] = rng.choice([CLS, SEP, PAD], size=len(specials))
    word_starts = rng.random(length) < 0.6
    config = MaskingConfig(0.4, 30, whole_word=whole_word)
    masked = create_masked_lm_predictions(input_ids, word_starts, rng, SPECIAL, config)

    assert not np.isin(input_ids[masked.positions], [CLS, SEP, PAD]).any()
    np.testing.assert_array_equal(masked.labels, input_ids[masked.positions])
    assert np.all(np.diff(masked.positions) > 0)
    unchosen = np.setdiff1d(np.arange(length), masked.positions)
    np.testing.assert_array_equal(masked.input_ids[unchosen], input_ids[unchosen])
    shown = masked.input_ids[masked.positions]
    assert np.all((shown == MASK) | (shown == masked.labels) | ~np.isin(shown, SPECIAL.special_ids))
    assert masked.input_ids.dtype == masked.positions.dtype == masked.labels.dtype == np.int32


@settings(derandomize=True, max_examples=40)
@given(length=st.integers(4, 80), seed=st.integers(0, 2**32 - 1),
       start_share=st.sampled_from([0.2, 0.5, 0.8]))
def test_whole_word_masking_never_masks_part_of_a_word(length, seed, start_share):
    """With whole-word masking, each word (a start token and the non-start tokens after it, up to a special
    token) is chosen entirely or not at all."""
    rng = np.random.default_rng(seed)
    input_ids = pair_sequence(rng, length // 2, length - length // 2)
    word_starts = rng.random(len(input_ids)) < start_share
    for _ in range(20):
        masked = create_masked_lm_predictions(input_ids, word_starts, rng, SPECIAL, MaskingConfig(0.3, 40))
        chosen = np.zeros(len(input_ids), bool)
        chosen[masked.positions] = True
        word = np.cumsum(word_starts | np.isin(input_ids, [CLS, SEP]))  # a word id per position
        for w in np.unique(word[chosen]):
            members = (word == w) & ~np.isin(input_ids, [CLS, SEP])
            assert chosen[members].all(), f"word {w} partly masked"


def test_whole_word_units_do_not_cross_a_separator():
    """A `##` piece right after [SEP] (left over from truncation) starts a unit of its own; specials are no
    unit at all. Expected units written by hand."""
    input_ids = np.array([CLS, 10, 11, SEP, 12, 13, 14, SEP], np.int32)
    word_starts = np.array([1, 1, 0, 1, 0, 1, 0, 1], bool)
    starts, ends = whole_word_units(input_ids, word_starts, SPECIAL.never_mask_ids)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [(1, 3), (4, 5), (5, 7)]


@settings(derandomize=True, max_examples=10)
@given(length=st.integers(10, 60), seed=st.integers(0, 2**32 - 1))
def test_each_candidate_is_chosen_with_equal_probability(length, seed):
    """Over 3000 sequences, every text position is chosen with probability k / C (k chosen of C candidates):
    each position's count lies within 5 sigma of the binomial Binomial(3000, k/C). A routine that prefers the
    start of the sequence (no shuffle) fails this."""
    rng = np.random.default_rng(seed)
    input_ids = pair_sequence(rng, length // 2, length - length // 2)
    config = MaskingConfig(0.15, 20, whole_word=False)
    trials = 3000
    counts = np.zeros(len(input_ids))
    for _ in range(trials):
        counts[create_masked_lm_predictions(input_ids, None, rng, SPECIAL, config).positions] += 1
    candidates = length
    chosen = min(20, max(1, round(len(input_ids) * 0.15)))
    p = chosen / candidates
    text = ~np.isin(input_ids, [CLS, SEP])
    assert counts[~text].sum() == 0
    assert np.all(np.abs(counts[text] / trials - p) <= binomial_bound(p, trials) + 1e-12)
    # The masking rate: the share of all tokens chosen is p * C / L, 15% up to rounding to whole tokens.
    assert abs(counts.sum() / (trials * len(input_ids)) - 0.15) <= 0.5 / len(input_ids) + 1e-12


@settings(derandomize=True, max_examples=6)
@given(split=st.sampled_from([(0.8, 0.1), (0.5, 0.25), (0.0, 1.0), (1.0, 0.0)]),
       seed=st.integers(0, 2**32 - 1))
def test_replacement_split_within_binomial_bounds(split, seed):
    """Of the chosen tokens, shares (mask, random, unchanged) match the configured split within 5 sigma over
    ~20,000 tokens. The original text is one id, so 'random' is told apart from 'unchanged' except when the
    random draw hits that id (probability 1/995, accounted for). Random tokens are never special."""
    mask_prob, random_prob = split
    rng = np.random.default_rng(seed)
    input_ids = np.array([CLS] + [500] * 50 + [SEP] + [500] * 47 + [SEP], np.int32)
    config = MaskingConfig(0.5, 100, mask_token_prob=mask_prob, random_token_prob=random_prob,
                           whole_word=False)
    shown = []  # what the model sees at the chosen positions
    for _ in range(400):
        masked = create_masked_lm_predictions(input_ids, None, rng, SPECIAL, config)
        shown.append(masked.input_ids[masked.positions])
    shown = np.concatenate(shown)
    total = 400 * 50  # round(100 * 0.5) = 50 chosen in each 100-token sequence
    assert shown.size == total
    masks = np.count_nonzero(shown == MASK)
    randoms = np.count_nonzero((shown != MASK) & (shown != 500))
    pool = len(SPECIAL.random_token_ids)
    expected_random = random_prob * (1 - 1 / pool)
    assert abs(masks / total - mask_prob) <= binomial_bound(mask_prob, total) + 1e-12
    assert abs(randoms / total - expected_random) <= binomial_bound(expected_random, total) + 1e-12
    assert not np.isin(shown[(shown != MASK) & (shown != 500)], SPECIAL.special_ids).any()


def test_same_seed_gives_the_same_mask():
    """Two generators with one seed give identical masks; another seed gives another mask."""
    input_ids = pair_sequence(np.random.default_rng(0), 30, 30)
    results = [create_masked_lm_predictions(input_ids, None, np.random.default_rng(seed), SPECIAL,
                                            MaskingConfig()) for seed in (7, 7, 8)]
    np.testing.assert_array_equal(results[0].input_ids, results[1].input_ids)
    np.testing.assert_array_equal(results[0].positions, results[1].positions)
    assert not np.array_equal(results[0].positions, results[2].positions)


def test_too_few_predictions_for_the_length_warns():
    """max_predictions_per_seq=20 with 512-token sequences (15% asks for 77) warns and names both numbers;
    at 128 tokens (19 asked) it is silent."""
    with pytest.warns(DataWarning, match=r"max_predictions_per_seq=20 .* 77 predictions"):
        MaskingConfig().check_sequence_length(512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MaskingConfig().check_sequence_length(128)


@pytest.mark.parametrize("fields", [dict(masked_lm_prob=0.0), dict(masked_lm_prob=1.5),
                                    dict(max_predictions_per_seq=0),
                                    dict(mask_token_prob=0.9, random_token_prob=0.2),
                                    dict(random_token_prob=-0.1)])
def test_bad_masking_config_is_refused(fields):
    """Probabilities out of range or a zero prediction cap raise ConfigError naming the value."""
    name, value = next(iter(fields.items()))
    with pytest.raises(ConfigError, match=f"{name}={value}"):
        MaskingConfig(**fields)
