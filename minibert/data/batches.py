"""Batches for pretraining: shards in, dicts of arrays with Google's feature names out (see features.py).

Masking. Shards built with static masking carry their masks (Google: the same mask in each of the
`dupe_factor` copies, for every epoch). Shards built with dynamic masking carry unmasked rows, and the
masking routine runs each time a row is served, so each epoch shows a new mask (RoBERTa §4.1: this does as
well or better, and needs no copies on disk).
"""

# What a stream of batches guarantees:
# - Seeded: epoch e of seed s is always the same batches, so a run can be resumed or repeated exactly.
# - Shuffled: each epoch visits the shards in a random order, and the rows of each shard in a random order.
#   The build already shuffled the documents (as Google does), so a shard mixes many documents.
# - Epochs: `epoch(e)` serves every row once; `forever()` runs epoch after epoch and says which one it is in.
# - Memory: one shard at a time, plus the rows carried over into the next batch.

from pathlib import Path

import numpy as np

from minibert.data.features import BATCH_FIELDS, mask_rows
from minibert.data.masking import MaskingConfig
from minibert.data.shards import manifest_fields, read_manifest, read_shard
from minibert.data.special_tokens import SpecialTokens
from minibert.errors import ConfigError, DataError


class PretrainingBatches:
    """Iterate over the `split` ("train" or "eval") of the shards in `directory`, `batch_size` rows at a time.

    drop_last: leave out the last, smaller batch of each epoch (the training loop may want equal batches).
    masking: a `MaskingConfig` to mask dynamic shards with instead of the one they were built with.
    """

    def __init__(self, directory, batch_size, split="train", seed=12345, shuffle=True, drop_last=False,
                 masking=None):
        if batch_size < 1:
            raise ConfigError(f"batch_size={batch_size} must be at least 1")
        self.directory, self.batch_size, self.split = Path(directory), batch_size, split
        self.seed, self.shuffle, self.drop_last = seed, shuffle, drop_last
        self.manifest = read_manifest(directory)
        if split not in self.manifest["splits"]:
            raise DataError(f"{directory} has no {split!r} split, only {sorted(self.manifest['splits'])}")
        self.shards = self.manifest["splits"][split]["shards"]
        self.rows = self.manifest["splits"][split]["rows"]
        if not self.rows:
            raise DataError(f"the {split!r} split of {directory} is empty; build it from a larger corpus")
        self.fields = manifest_fields(self.manifest)
        self.dynamic = self.manifest["options"]["masking"] == "dynamic"
        self.special_tokens = SpecialTokens.from_dict(self.manifest["special_tokens"])
        built_with = MaskingConfig(**self.manifest["options"]["masking_config"])
        if masking is not None and masking != built_with and not self.dynamic:
            raise ConfigError(f"{directory} holds statically masked rows; they cannot be masked again with "
                              f"{masking}: build the data with masking='dynamic'")
        if masking is not None:  # the shards' own setting decides whole-word masking
            masking = MaskingConfig(masking.masked_lm_prob, masking.max_predictions_per_seq,
                                    masking.mask_token_prob, masking.random_token_prob, built_with.whole_word)
        self.masking = masking or built_with

    def __len__(self):
        """Batches per epoch."""
        full, rest = divmod(self.rows, self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def epoch(self, epoch):
        """The batches of epoch `epoch`, each a dict {field: array} in Google's format (features.py)."""
        rng = np.random.default_rng([self.seed, epoch])
        order = rng.permutation(len(self.shards)) if self.shuffle else range(len(self.shards))
        carried = None
        for shard_index in order:
            shard = self.shards[shard_index]
            rows = read_shard(self.directory / shard["file"], self.fields, shard["rows"])
            row_order = rng.permutation(shard["rows"]) if self.shuffle else np.arange(shard["rows"])
            rows = {name: values[row_order] for name, values in rows.items()}
            if carried is not None:
                rows = {name: np.concatenate([carried[name], rows[name]]) for name in rows}
            count = len(row_order) + (0 if carried is None else len(carried["input_ids"]))
            full = count - count % self.batch_size
            for start in range(0, full, self.batch_size):
                batch_rows = {name: values[start:start + self.batch_size] for name, values in rows.items()}
                yield self.serve(batch_rows, rng)
            carried = {name: values[full:] for name, values in rows.items()} if full < count else None
        if carried is not None and not self.drop_last:
            yield self.serve(carried, rng)

    def forever(self, start_epoch=0):
        """Yield `(epoch, batch)` for epoch `start_epoch`, then the next, without end."""
        epoch = start_epoch
        while True:
            for batch in self.epoch(epoch):
                yield epoch, batch
            epoch += 1

    def serve(self, rows, rng):
        if self.dynamic:
            return mask_rows(rows, rng, self.special_tokens, self.masking)
        return {name: np.ascontiguousarray(rows[name]) for name in BATCH_FIELDS}
