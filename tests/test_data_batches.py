"""The batch iterator (minibert/data/batches.py): each row once per epoch, seeded, dynamic or static masks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.batches import PretrainingBatches
from minibert.data.features import BATCH_FIELDS, UNMASKED_FIELDS, field_specs, mask_rows
from minibert.data.masking import MaskingConfig
from minibert.data.shards import ShardWriter, write_manifest
from minibert.data.special_tokens import SpecialTokens
from minibert.errors import ConfigError, DataError

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = SpecialTokens(vocab_size=5000, cls_id=CLS, sep_id=SEP, pad_id=PAD, mask_id=MASK,
                        special_ids=[PAD, UNK, CLS, SEP, MASK])
SEQ, PREDICTIONS = 16, 4


def unmasked_rows(count, seed=0):
    """Rows `[CLS] 1000+n 10 11 ... [SEP]` of random lengths: the token after [CLS] names row n."""
    rng = np.random.default_rng(seed)
    specs = field_specs(SEQ, PREDICTIONS)
    rows = {name: np.zeros((count, *specs[name][1]), specs[name][0]) for name in UNMASKED_FIELDS}
    for n in range(count):
        length = int(rng.integers(4, SEQ + 1))
        rows["input_ids"][n, :length] = [CLS, 1000 + n, *range(10, 10 + length - 3), SEP]
        rows["input_mask"][n, :length] = 1
        rows["segment_ids"][n, length // 2:length] = 1
        rows["word_starts"][n, :length] = True
        rows["next_sentence_labels"][n] = n % 2
    return rows


def write_shards(directory, rows, rows_per_shard, masking):
    """Shards and manifest as build.py writes them: unmasked rows (dynamic) or masked once (static)."""
    config = MaskingConfig(0.15, PREDICTIONS)
    if masking == "static":
        rows = mask_rows(rows, np.random.default_rng(1), SPECIAL, config)
    specs = field_specs(SEQ, PREDICTIONS)
    fields = {name: specs[name] for name in rows}
    writer = ShardWriter(directory, "train", fields, rows_per_shard)
    writer.write(rows)
    write_manifest(directory, {
        "options": {"masking": masking, "masking_config": vars(config)},
        "special_tokens": SPECIAL.to_dict(),
        "fields": {name: {"dtype": np.dtype(d).name, "shape": list(s)} for name, (d, s) in fields.items()},
        "splits": {"train": writer.close()}})
    return rows


def original_ids(batch):
    """Undo the masking: put the labels back at the predicted positions."""
    ids = batch["input_ids"].copy()
    for n in range(len(ids)):
        real = batch["masked_lm_weights"][n] > 0
        ids[n, batch["masked_lm_positions"][n, real]] = batch["masked_lm_ids"][n, real]
    return ids


@settings(derandomize=True, max_examples=25)
@given(count=st.integers(1, 60), rows_per_shard=st.integers(1, 25), batch_size=st.integers(1, 16),
       drop_last=st.booleans(), masking=st.sampled_from(["dynamic", "static"]))
def test_an_epoch_serves_every_row_once(tmp_path_factory, count, rows_per_shard, batch_size, drop_last,
                                        masking):
    """Across shard boundaries: each row exactly once per epoch (the last partial batch dropped if asked),
    every batch full but the last, len() = number of batches, Google's fields with their dtypes."""
    directory = tmp_path_factory.mktemp("shards")
    rows = write_shards(directory, unmasked_rows(count), rows_per_shard, masking)
    batches = PretrainingBatches(directory, batch_size, seed=3, drop_last=drop_last)
    served = list(batches.epoch(0))
    assert len(served) == len(batches)
    sizes = [len(batch["input_ids"]) for batch in served]
    assert all(size == batch_size for size in sizes[:-1])
    expected = count - count % batch_size if drop_last else count
    assert sum(sizes) == expected
    for batch in served:
        assert tuple(batch) == BATCH_FIELDS
        assert batch["masked_lm_weights"].dtype == np.float32
        assert all(batch[name].dtype == np.int32 for name in BATCH_FIELDS if name != "masked_lm_weights")
        assert batch["input_ids"].shape[1:] == (SEQ,) and batch["masked_lm_ids"].shape[1:] == (PREDICTIONS,)
        assert batch["input_ids"].min() >= 0 and batch["input_ids"].max() < SPECIAL.vocab_size
    if served:
        names = np.concatenate([original_ids(batch)[:, 1] for batch in served]) - 1000
        assert len(set(names.tolist())) == len(names) == expected
        if masking == "dynamic":
            all_ids = np.concatenate([original_ids(batch) for batch in served])
            np.testing.assert_array_equal(all_ids[np.argsort(names)], rows["input_ids"][np.sort(names)])


def test_seeded_epochs_repeat_and_differ(tmp_path):
    """Same seed and epoch: identical batches. Another epoch or seed: another order and other masks."""
    write_shards(tmp_path, unmasked_rows(40), 16, "dynamic")

    def epoch(seed, number):
        batches = PretrainingBatches(tmp_path, 8, seed=seed)
        return np.concatenate([batch["input_ids"] for batch in batches.epoch(number)])

    np.testing.assert_array_equal(epoch(1, 0), epoch(1, 0))
    assert not np.array_equal(epoch(1, 0), epoch(1, 1))
    assert not np.array_equal(epoch(1, 0), epoch(2, 0))


def test_dynamic_masking_draws_a_new_mask_each_epoch(tmp_path):
    """Without shuffling, rows come in the same order each epoch, yet the masked positions differ (RoBERTa's
    dynamic masking); with static masking they are the stored ones, every epoch."""
    write_shards(tmp_path / "dynamic", unmasked_rows(30), 30, "dynamic")
    stored = write_shards(tmp_path / "static", unmasked_rows(30), 30, "static")
    dynamic = PretrainingBatches(tmp_path / "dynamic", 30, shuffle=False)
    first, second = (next(iter(dynamic.epoch(e)))["masked_lm_positions"] for e in (0, 1))
    assert not np.array_equal(first, second)
    static = PretrainingBatches(tmp_path / "static", 30, shuffle=False)
    for number in (0, 1):
        batch = next(iter(static.epoch(number)))
        for name in BATCH_FIELDS:
            np.testing.assert_array_equal(batch[name], stored[name])


def test_dynamic_rows_can_be_masked_at_another_rate(tmp_path):
    """A run may mask its training rows at its own rate (masked_lm_prob) and width; the held-out rows keep the
    rate they were built with. Statically masked rows cannot be masked again: refused, not ignored."""
    write_shards(tmp_path / "dynamic", unmasked_rows(40), 40, "dynamic")
    built = PretrainingBatches(tmp_path / "dynamic", 40, shuffle=False)
    heavier = PretrainingBatches(tmp_path / "dynamic", 40, shuffle=False, masking=MaskingConfig(0.5, 8))
    lengths = next(iter(built.epoch(0)))["input_mask"].sum(axis=1)
    for batches, config in ((built, MaskingConfig(0.15, PREDICTIONS)), (heavier, MaskingConfig(0.5, 8))):
        batch = next(iter(batches.epoch(0)))
        assert batch["masked_lm_positions"].shape == (40, config.max_predictions_per_seq)
        wanted = [config.num_to_predict(length) for length in lengths]  # Google counts [CLS] and [SEP] too
        np.testing.assert_array_equal(batch["masked_lm_weights"].sum(axis=1), wanted)
    write_shards(tmp_path / "static", unmasked_rows(10), 10, "static")
    with pytest.raises(ConfigError, match="statically masked"):
        PretrainingBatches(tmp_path / "static", 10, masking=MaskingConfig(0.5, 8))


def test_forever_crosses_epoch_boundaries(tmp_path):
    """forever() runs epoch 0, then 1, ..., and says which epoch each batch belongs to."""
    write_shards(tmp_path, unmasked_rows(10), 4, "dynamic")
    stream = PretrainingBatches(tmp_path, 4).forever()
    assert [next(stream)[0] for _ in range(7)] == [0, 0, 0, 1, 1, 1, 2]


def test_missing_split_is_a_clear_error(tmp_path):
    """Asking for a split the shards do not have names the split and the ones there are."""
    write_shards(tmp_path, unmasked_rows(5), 4, "dynamic")
    with pytest.raises(DataError, match="no 'eval' split"):
        PretrainingBatches(tmp_path, 4, split="eval")
