"""Exercise mask_80_10_10 (lesson 08): the replacement draw in `create_masked_lm_predictions`
(minibert/data/masking.py).

Of the chosen positions, 80% become [MASK], 10% a random non-special token, 10% stay as they were (BERT
paper §3.1). Counted over thousands of sequences, each share must lie within 5 standard deviations of its
probability; positions that were not chosen must never change.
"""

import math

import numpy as np

from minibert.data import MaskingConfig, SpecialTokens, create_masked_lm_predictions

SPECIAL = SpecialTokens(vocab_size=1000, cls_id=1, sep_id=2, pad_id=0, mask_id=3, special_ids=[0, 1, 2, 3, 4])


def sequence(rng, length=40):
    body = rng.integers(5, 1000, size=length - 3)
    return np.concatenate([[1], body[: length // 2], [2], body[length // 2:], [2]]).astype(np.int32)


def count_outcomes(config, sequences=1500, seed=0):
    rng = np.random.default_rng(seed)
    counts = {"mask": 0, "random": 0, "same": 0}
    for _ in range(sequences):
        ids = sequence(rng)
        out = create_masked_lm_predictions(ids, None, rng, SPECIAL, config)
        chosen = np.zeros(len(ids), bool)
        chosen[out.positions] = True
        np.testing.assert_array_equal(out.input_ids[~chosen], ids[~chosen])  # the rest is untouched
        np.testing.assert_array_equal(out.labels, ids[out.positions])  # labels are the originals
        seen = out.input_ids[out.positions]
        assert not np.isin(seen[seen != SPECIAL.mask_id], [0, 1, 2, 4]).any()  # never a special token
        counts["mask"] += int(np.sum(seen == SPECIAL.mask_id))
        counts["same"] += int(np.sum(seen == out.labels))
        counts["random"] += int(np.sum((seen != SPECIAL.mask_id) & (seen != out.labels)))
    return counts


def within_5_sigma(count, total, p):
    return abs(count - total * p) <= 5 * math.sqrt(total * p * (1 - p)) + 1


def test_shares_are_80_10_10():
    """About 9,000 chosen tokens: [MASK] ~ 0.8, random ~ 0.1, unchanged ~ 0.1 (a random draw equal to the
    original, chance 1/995, counts as unchanged)."""
    counts = count_outcomes(MaskingConfig(whole_word=False))
    total = sum(counts.values())
    p_same_by_chance = 0.1 / len(SPECIAL.random_token_ids)
    assert within_5_sigma(counts["mask"], total, 0.8)
    assert within_5_sigma(counts["random"], total, 0.1 - p_same_by_chance)
    assert within_5_sigma(counts["same"], total, 0.1 + p_same_by_chance)


def test_each_token_draws_on_its_own():
    """One draw per chosen token, not one per sequence: two chosen tokens of a sequence both become [MASK]
    with probability 0.8² = 0.64 if they draw on their own, 0.8 if they share a draw. Over ~4,500 disjoint
    pairs of chosen tokens (disjoint, so the pairs are independent), the both-[MASK] share is within 5 sigma
    of 0.64."""
    rng = np.random.default_rng(1)
    both = pairs = 0
    for _ in range(1500):
        out = create_masked_lm_predictions(sequence(rng), None, rng, SPECIAL, MaskingConfig(whole_word=False))
        masked = out.input_ids[out.positions] == SPECIAL.mask_id
        paired = masked[: len(masked) // 2 * 2].reshape(-1, 2)  # (P // 2, 2): tokens 0 and 1, 2 and 3, ...
        both += int(paired.all(axis=1).sum())
        pairs += len(paired)
    assert within_5_sigma(both, pairs, 0.64), f"{both} of {pairs} pairs both [MASK]: draw once per token"


def test_shares_follow_the_config():
    """mask_token_prob=0, random_token_prob=1: every chosen token becomes a random one, none [MASK]."""
    counts = count_outcomes(MaskingConfig(whole_word=False, mask_token_prob=0.0, random_token_prob=1.0),
                            sequences=200)
    assert counts["mask"] == 0
    assert counts["random"] > 0.97 * sum(counts.values())


def test_random_tokens_draw_on_their_own():
    """Every random replacement draws its own token: in sequences where every chosen token becomes a random
    one (mask_token_prob 0, random_token_prob 1), the replacements of one sequence are not all the same token
    (with 6 of 995 possible tokens, all equal by chance has probability below 1e-12)."""
    rng = np.random.default_rng(2)
    config = MaskingConfig(whole_word=False, mask_token_prob=0.0, random_token_prob=1.0)
    for _ in range(20):
        out = create_masked_lm_predictions(sequence(rng), None, rng, SPECIAL, config)
        seen = out.input_ids[out.positions]
        assert len(seen) >= 5 and len(np.unique(seen)) > 1, f"every random slot got token {seen[0]}"
