"""BERT for pretraining: the encoder plus its two heads (paper §3.1).

- Masked LM: guess the tokens hidden behind [MASK]. Dense -> activation -> LayerNorm, then a decoder that
  multiplies by the word-embedding matrix itself (tied weights, Press & Wolf 2017), plus a bias of its own.
- Next sentence prediction: is sentence B the one that followed A (0, IsNext) or a random one (1, NotNext)?
  A Linear(H, 2) on the pooled [CLS] vector.
The MLM head runs only at the masked positions (Google run_pretraining.py `gather_indexes`).

Legend: B batch, S sequence length, H hidden size, V vocabulary, P masked positions per sequence.
"""

# Tying means the same vector represents a token going in and coming out, and saves V·H parameters.
# Masked positions only: with 20 of 128 tokens masked, that is 6x less work in the most expensive matmul of
# the model, (·, H) @ (H, V).

from dataclasses import dataclass

import numpy as np

from minibert import functional as F
from minibert.autograd import Tensor
from minibert.model.bert import BertModel
from minibert.model.inputs import check_batch, check_masked_positions
from minibert.model.savable import SavableModel
from minibert.nn.layers import LayerNorm, Linear
from minibert.nn.module import Module, Parameter
from minibert.nn.transformer import activation


class PredictionTransform(Module):
    """LayerNorm(act(Dense(h))), the MLM head's layer before the decoder. HF: `cls.predictions.transform`."""

    def __init__(self, config, rng):
        super().__init__()
        self.dense = Linear(config.hidden_size, config.hidden_size, rng, config.initializer_range)
        self.hidden_act = config.hidden_act
        self.act = activation(config.hidden_act)
        self.LayerNorm = LayerNorm(config.hidden_size, config.layer_norm_eps)

    def forward(self, h):
        # BEGIN EXERCISE prediction_transform: LayerNorm(act(Dense(h)))
        return self.LayerNorm(self.act(self.dense(h)))  # (B, P, H) -> (B, P, H)
        # END EXERCISE


class MaskedLMHead(Module):
    """logits = transform(h) · Eᵀ + b, with E the word-embedding matrix (V, H). HF: `cls.predictions`."""

    def __init__(self, config, rng):
        super().__init__()
        self.transform = PredictionTransform(config, rng)
        self.bias = Parameter(np.zeros(config.vocab_size, dtype=np.float32))  # (V,), the decoder's own bias

    def forward(self, h, word_embeddings):
        """h (B, P, H) (or (B, S, H)); word_embeddings: the tied (V, H) Parameter. Returns (B, P, V)."""
        # The gradient of the loss reaches word_embeddings twice, from the input lookup and from here; the
        # engine adds the two, which is what tying means.
        # BEGIN EXERCISE tied_decoder: the transform, then the word-embedding matrix itself as the decoder, plus b
        return F.linear(self.transform(h), word_embeddings, self.bias)  # transform(h) @ Eᵀ + b: (B, P, V)
        # END EXERCISE


class PreTrainingHeads(Module):
    """HF's `cls`: `predictions` (masked LM) and `seq_relationship` (next sentence prediction)."""

    def __init__(self, config, rng):
        super().__init__()
        self.predictions = MaskedLMHead(config, rng)
        # Two classes: 0 IsNext, 1 NotNext.
        self.seq_relationship = Linear(config.hidden_size, 2, rng, config.initializer_range)


@dataclass
class PreTrainingOutput:
    sequence_output: Tensor  # (B, S, H), or (B, 1 + P, H) with masked_positions: [CLS], then those
    pooled_output: Tensor  # (B, H)
    mlm_logits: Tensor  # (B, P, V) at masked_positions, or (B, S, V) when none were given
    nsp_logits: Tensor  # (B, 2): IsNext, NotNext
    attentions: list | None = None  # one (B, A, S, S) array per layer, when asked


class BertForPreTraining(SavableModel):
    """BertModel + the MLM and NSP heads. `seed` fixes the initial weights and the dropout draws."""

    def __init__(self, config, seed=0):
        super().__init__(config)
        self.rng = np.random.default_rng(seed)  # one generator for init and dropout, shared by every layer
        self.bert = BertModel(config, rng=self.rng)
        self.cls = PreTrainingHeads(config, self.rng)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, masked_positions=None,
                output_attentions=False, attention=None):
        """Run BERT and both heads on a batch.

        input_ids, token_type_ids, attention_mask: (B, S) int arrays or lists (attention_mask: 1 real, 0 pad).
        masked_positions: (B, P) positions to predict; the MLM head then runs on those P positions only, and
            sequence_output holds the vectors the heads read, [CLS] and those P, (B, 1 + P, H).
        attention: "bidirectional" or "causal", overriding config.attention.
        """
        input_ids, token_type_ids, attention_mask = check_batch(self.config, input_ids, token_type_ids,
                                                                attention_mask)
        # BEGIN EXERCISE pretraining_heads: read [CLS] and the masked positions; MLM head there, NSP on the pooled
        read = None  # the positions the heads read: every one, unless masked_positions are given
        if masked_positions is not None:  # checked before the expensive part, so a bad batch fails fast
            masked_positions = check_masked_positions(masked_positions, *input_ids.shape)
            # [CLS] for the NSP head (through the pooler), then the masked positions for the MLM head
            read = np.concatenate([np.zeros_like(masked_positions[:, :1]), masked_positions], axis=1)  # (B, 1 + P)
        encoded = self.bert.encode(input_ids, token_type_ids, attention_mask, output_attentions, attention, read)
        sequence_output = encoded.sequence_output  # (B, S, H), or (B, 1 + P, H) at the positions read
        if masked_positions is not None:
            sequence_output = sequence_output[:, 1:]  # the masked positions' vectors, (B, P, H)
        mlm_logits = self.cls.predictions(sequence_output, self.bert.embeddings.word_embeddings.weight)
        nsp_logits = self.cls.seq_relationship(encoded.pooled_output)  # (B, H) -> (B, 2)
        return PreTrainingOutput(encoded.sequence_output, encoded.pooled_output, mlm_logits, nsp_logits,
                                 encoded.attentions)
        # END EXERCISE
