"""Instances as Google's padded features (minibert/data/features.py)."""

import numpy as np

from minibert.data.features import BATCH_FIELDS, instance_rows, mask_rows
from minibert.data.instances import Instance
from minibert.data.masking import MaskingConfig
from minibert.data.special_tokens import SpecialTokens

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = SpecialTokens(vocab_size=100, cls_id=CLS, sep_id=SEP, pad_id=PAD, mask_id=MASK,
                        special_ids=[PAD, UNK, CLS, SEP, MASK])


def make_instance(length_a, length_b, label):
    ids = np.array([CLS, *range(10, 10 + length_a), SEP, *range(50, 50 + length_b), SEP], np.int32)
    segments = np.array([0] * (length_a + 2) + [1] * (length_b + 1), np.int32)
    return Instance(ids, segments, np.ones(len(ids), bool), label)


def test_rows_are_padded_as_google_pads_them():
    """input_ids padded with [PAD], input_mask 1 on real tokens only, segment ids 0 on padding; the label
    copied; Google's dtypes. Expected rows written out by hand."""
    rows = instance_rows([make_instance(2, 1, 1), make_instance(1, 1, 0)], 9, PAD)
    np.testing.assert_array_equal(rows["input_ids"], [[CLS, 10, 11, SEP, 50, SEP, 0, 0, 0],
                                                      [CLS, 10, SEP, 50, SEP, 0, 0, 0, 0]])
    np.testing.assert_array_equal(rows["input_mask"], [[1, 1, 1, 1, 1, 1, 0, 0, 0],
                                                       [1, 1, 1, 1, 1, 0, 0, 0, 0]])
    np.testing.assert_array_equal(rows["segment_ids"], [[0, 0, 0, 0, 1, 1, 0, 0, 0],
                                                        [0, 0, 0, 1, 1, 0, 0, 0, 0]])
    np.testing.assert_array_equal(rows["next_sentence_labels"], [1, 0])
    assert rows["input_ids"].dtype == rows["input_mask"].dtype == rows["segment_ids"].dtype == np.int32


def test_masked_rows_have_googles_fields_and_zero_padding():
    """After masking: exactly Google's seven fields with their dtypes and shapes; weights 1.0 on the
    predictions and 0 after them, positions and ids 0 after them; positions inside the real tokens; labels
    equal the unmasked ids; padding untouched."""
    rng = np.random.default_rng(0)
    instances = [make_instance(a, b, a % 2) for a, b in [(3, 4), (1, 1), (20, 15)]]
    rows = instance_rows(instances, 40, PAD)
    config = MaskingConfig(0.15, 5)
    batch = mask_rows(rows, rng, SPECIAL, config)
    assert tuple(batch) == BATCH_FIELDS
    shapes = {"input_ids": (3, 40), "input_mask": (3, 40), "segment_ids": (3, 40),
              "masked_lm_positions": (3, 5), "masked_lm_ids": (3, 5), "masked_lm_weights": (3, 5),
              "next_sentence_labels": (3,)}
    for name, shape in shapes.items():
        assert batch[name].shape == shape
        assert batch[name].dtype == (np.float32 if name == "masked_lm_weights" else np.int32)
    for n, instance in enumerate(instances):
        length = len(instance.input_ids)
        count = min(5, max(1, round(length * 0.15)))
        assert batch["masked_lm_weights"][n].tolist() == [1.0] * count + [0.0] * (5 - count)
        positions = batch["masked_lm_positions"][n, :count]
        assert np.all((positions > 0) & (positions < length))
        assert not batch["masked_lm_positions"][n, count:].any()
        assert not batch["masked_lm_ids"][n, count:].any()
        np.testing.assert_array_equal(batch["masked_lm_ids"][n, :count], rows["input_ids"][n, positions])
        assert not batch["input_ids"][n, length:].any()
