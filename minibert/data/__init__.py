"""BERT's pretraining data: corpora, NSP/SOP instances, the masking routine, shards and batches."""

# The modules, in the order the data flows through them:
# location.py        the data folder: the checkout's data/, MINIBERT_DATA, or ~/.cache/minibert, never the cwd
# corpora/           corpus builders: pydocs, pydocs-large, synthetic, a user's file (Google's format)
# documents.py       a corpus file -> tokenized documents, with whole-word boundaries (Chinese too)
# token_store.py     the tokenized corpus on disk, memory-mapped: random access without holding it in RAM
# instances.py       [CLS] A [SEP] B [SEP] instances: NSP (BERT), SOP (ALBERT) or full sentences (RoBERTa)
# masking.py         the masking routine: 15% of the tokens, 80% [MASK] / 10% random / 10% unchanged
# special_tokens.py  the ids of [CLS] [SEP] [PAD] [MASK] and the pool of random replacement tokens
# features.py        instances as padded arrays with Google's feature names (the batch format)
# shards.py          streamed .npz shards and their manifest
# batches.py         seeded, shuffled batches by epoch, with dynamic or static masking
# reverse.py         a batch read right to left (the direction experiment's ELMo-like arm)
# build.py           the `data` command: corpus -> vocabulary -> shards
# problems.py        warnings about usable but suspicious input, with file and line

from minibert.data.batches import PretrainingBatches
from minibert.data.build import PretrainingDataConfig, build_pretraining_data
from minibert.data.features import BATCH_FIELDS, instance_rows, mask_rows
from minibert.data.instances import (
    Instance,
    InstanceConfig,
    Sentence,
    create_instances_from_document,
    iter_instances,
    truncate_seq_pair,
)
from minibert.data.masking import MaskedSequence, MaskingConfig, create_masked_lm_predictions
from minibert.data.problems import DataWarning
from minibert.data.special_tokens import SpecialTokens

__all__ = [
    "BATCH_FIELDS",
    "DataWarning",
    "Instance",
    "InstanceConfig",
    "MaskedSequence",
    "MaskingConfig",
    "PretrainingBatches",
    "PretrainingDataConfig",
    "Sentence",
    "SpecialTokens",
    "build_pretraining_data",
    "create_instances_from_document",
    "create_masked_lm_predictions",
    "instance_rows",
    "iter_instances",
    "mask_rows",
    "truncate_seq_pair",
]
