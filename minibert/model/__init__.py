"""BERT itself: the config, the attention mask, the encoder, the pretraining heads, and the losses.

Read in this order: `config.py`, `masks.py`, `bert.py` (embeddings, encoder layers, pooler),
`pretraining.py` (MLM and NSP heads), `losses.py`. `inputs.py` checks a batch; `savable.py` forwards
save/load to `minibert/io`; `sentence_vectors.py` turns token vectors into one vector per sentence, and two
of those into what a classifier compares.
"""

from minibert.config import PRESETS, BertConfig
from minibert.model.bert import (
    AttentionSublayer,
    BertEmbeddings,
    BertModel,
    BertModelOutput,
    Encoder,
    EncoderLayer,
    Pooler,
)
from minibert.model.losses import causal_lm_loss, pretraining_loss
from minibert.model.masks import build_attention_mask, mask_matrix
from minibert.model.pretraining import (
    BertForPreTraining,
    MaskedLMHead,
    PredictionTransform,
    PreTrainingHeads,
    PreTrainingOutput,
)

__all__ = [
    "PRESETS", "AttentionSublayer", "BertConfig", "BertEmbeddings", "BertForPreTraining", "BertModel",
    "BertModelOutput", "Encoder", "EncoderLayer", "MaskedLMHead", "Pooler", "PreTrainingHeads",
    "PreTrainingOutput", "PredictionTransform", "build_attention_mask", "causal_lm_loss", "mask_matrix",
    "pretraining_loss",
]
