"""BERT's encoder (Devlin et al. 2018): embeddings, post-LN transformer layers, and the pooler.

Reading order, the order data flows: `BertEmbeddings` (token + segment + position, paper §3, Figure 2),
`EncoderLayer` L times (post-LN, Google modeling.py `transformer_model`), `Pooler` (the [CLS] vector);
`BertModel` strings them together; `pretraining.py` adds the MLM and NSP heads on top.
Attribute names are HuggingFace's, so `state_dict()` keys are those of real BERT checkpoints
(`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, ...).

Legend: B batch, S sequence length, H hidden size, A heads, I intermediate size.
"""

# Reading order in detail:
# 1. `BertEmbeddings`: token + segment + position embeddings, then LayerNorm and dropout (paper §3, Figure 2).
# 2. `EncoderLayer`, L times: self-attention, then the feed-forward network, each followed by
#    x = LayerNorm(x + Dropout(Dense(sublayer(x)))), "post-LN" (Google modeling.py `transformer_model`).
# 3. `Pooler`: tanh(Dense(h_[CLS])), the sentence-level vector the NSP and classification heads read.

from dataclasses import dataclass

import numpy as np

from minibert.autograd import Tensor
from minibert.model.inputs import check_batch
from minibert.model.masks import build_attention_mask
from minibert.model.savable import SavableModel
from minibert.nn.embedding import Embedding, embedding
from minibert.nn.layers import Dropout, LayerNorm, Linear
from minibert.nn.module import Module, ModuleList
from minibert.nn.transformer import FeedForward, MultiHeadSelfAttention, SublayerOutput


class BertEmbeddings(Module):
    """input = token embedding + segment embedding + position embedding (paper Figure 2), then LN, dropout.

    Positions are learned vectors, one per index up to `max_position_embeddings` (512): the reason BERT
    cannot read longer sequences.
    """

    def __init__(self, config, rng):
        super().__init__()
        std = config.initializer_range
        self.word_embeddings = Embedding(config.vocab_size, config.hidden_size, rng, std)  # (V, H)
        self.position_embeddings = Embedding(config.max_position_embeddings, config.hidden_size, rng, std)
        self.token_type_embeddings = Embedding(config.type_vocab_size, config.hidden_size, rng, std)  # (2, H)
        self.LayerNorm = LayerNorm(config.hidden_size, config.layer_norm_eps)
        self.dropout = Dropout(config.hidden_dropout_prob, rng)

    def forward(self, input_ids, token_type_ids):
        # BEGIN EXERCISE embeddings_sum: word + segment + position rows [:S], then LayerNorm, dropout
        seq_len = input_ids.shape[1]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)  # (B, S, H)
        x = x + self.position_embeddings.weight[:seq_len]  # position i takes row i: (S, H), broadcast over B
        return self.dropout(self.LayerNorm(x))
        # END EXERCISE


def gather_positions(sequence_output, positions):
    """The vectors at `positions` (B, P) of each sequence in sequence_output (B, S, H) -> (B, P, H).

    Google's `gather_indexes`: flatten to (B*S, H) and look up rows b*S + p, a row lookup like an embedding
    (`embedding`, nn/embedding.py), whose backward scatter-adds the gradient rows back in one pass.
    """
    # BEGIN EXERCISE gather_positions: row b*S + p of the (B*S, H) flattened output, looked up like an embedding
    batch, seq_len, hidden = sequence_output.shape
    flat_positions = positions + np.arange(batch)[:, None] * seq_len  # (B, P): row b*S + p of (B*S, H)
    return embedding(flat_positions, sequence_output.reshape(batch * seq_len, hidden))
    # END EXERCISE


class AttentionSublayer(Module):
    """x = LayerNorm(x + Dropout(Dense(MultiHeadSelfAttention(x)))). HF's `BertAttention`."""

    def __init__(self, config, rng):
        super().__init__()
        std = config.initializer_range
        # `self.self`: HF's checkpoint name for the attention proper (attention.self.query.weight, ...).
        self.self = MultiHeadSelfAttention(config.hidden_size, config.num_attention_heads,
                                           config.attention_probs_dropout_prob, rng, std)
        self.output = SublayerOutput(config.hidden_size, config.hidden_size, config.hidden_dropout_prob,
                                     config.layer_norm_eps, rng, std)

    def forward(self, x, mask, asking=None):
        """x (B, S, H) -> (LayerNorm(x + Dropout(Dense(attention(x)))) (B, S, H), probabilities (B, A, S, S)).
        With `asking` (B, R, H), the R tokens that ask (see MultiHeadSelfAttention): (B, R, H), (B, A, R, S)."""
        # BEGIN EXERCISE attention_sublayer: attention, then SublayerOutput, each asking token's input the residual
        context, probs = self.self(x, mask, asking)  # (B, S, H), (B, A, S, S); with asking (B, R, H), (B, A, R, S)
        return self.output(context, residual=x if asking is None else asking), probs  # each token's own input
        # END EXERCISE


class EncoderLayer(Module):
    """One transformer layer, post-LN as BERT:
        x = LN(x + Drop(Attn(x)))
        x = LN(x + Drop(FFN(x)))
    """

    def __init__(self, config, rng):
        super().__init__()
        std = config.initializer_range
        self.attention = AttentionSublayer(config, rng)
        self.intermediate = FeedForward(config.hidden_size, config.intermediate_size, config.hidden_act, rng,
                                        std)
        self.output = SublayerOutput(config.intermediate_size, config.hidden_size, config.hidden_dropout_prob,
                                     config.layer_norm_eps, rng, std)

    def forward(self, x, mask, asking=None):
        """x (B, S, H) -> (the layer's output (B, S, H), probabilities (B, A, S, S)); with `asking` (B, R, H),
        the output of those R tokens only, every token of x still answering: (B, R, H), (B, A, R, S)."""
        # BEGIN EXERCISE encoder_layer: the attention sublayer, then the feed-forward and its output sublayer
        x, probs = self.attention(x, mask, asking)  # (B, S, H), or (B, R, H) for the tokens asking
        x = self.output(self.intermediate(x), residual=x)  # (B, S, H) -> (B, S, I) -> (B, S, H)
        return x, probs
        # END EXERCISE


class Encoder(Module):
    """L encoder layers, one after the other (HF: `encoder.layer.{i}`)."""

    def __init__(self, config, rng):
        super().__init__()
        self.layer = ModuleList([EncoderLayer(config, rng) for _ in range(config.num_hidden_layers)])

    def forward(self, x, mask, output_attentions=False, output_positions=None):
        """Returns (the last layer's output (B, S, H), a list of each layer's (B, A, S, S) probabilities or
        None). With `output_positions` (B, R), only the outputs at those positions, (B, R, H): what the
        pretraining heads read."""
        # BEGIN EXERCISE encoder_stack: each layer on the previous one's output; keep probabilities if asked; gather
        attentions = [] if output_attentions else None
        for layer in self.layer:
            x, probs = layer(x, mask)
            if output_attentions:
                attentions.append(probs.data)
        if output_positions is not None:
            x = gather_positions(x, output_positions)  # (B, S, H) -> (B, R, H)
        return x, attentions
        # END EXERCISE


class Pooler(Module):
    """pooled = tanh(Dense(h_[CLS])): token 0's final vector, made into a sentence-level summary."""

    def __init__(self, config, rng):
        super().__init__()
        self.dense = Linear(config.hidden_size, config.hidden_size, rng, config.initializer_range)

    def forward(self, sequence_output):
        # BEGIN EXERCISE pooler: tanh of the dense layer on token 0 ([CLS]) of each sequence
        return self.dense(sequence_output[:, 0]).tanh()  # (B, S, H) -> (B, H)
        # END EXERCISE


@dataclass
class BertModelOutput:
    sequence_output: Tensor  # (B, S, H): the final vector of every token, or (B, R, H) at output_positions
    pooled_output: Tensor  # (B, H): the pooler's summary of [CLS]
    attentions: list | None = None  # one (B, A, S, S) array of probabilities per layer, when asked


class BertModel(SavableModel):
    """The encoder alone: embeddings -> L layers -> pooler. Add heads on top for pretraining or fine-tuning.

    `seed` makes the initial weights and the dropout draws reproducible. Heads built on top pass their own
    generator as `rng` instead, so that one seed governs the whole model.
    """

    def __init__(self, config, seed=0, rng=None):
        super().__init__(config)
        self.rng = np.random.default_rng(seed) if rng is None else rng  # init and dropout draws
        self.embeddings = BertEmbeddings(config, self.rng)
        self.encoder = Encoder(config, self.rng)
        self.pooler = Pooler(config, self.rng)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_attentions=False,
                attention=None):
        """Run the encoder. Inputs are int arrays or lists of shape (B, S); `attention_mask` is 1 for real
        tokens, 0 for padding; `attention` ("bidirectional" or "causal") overrides `config.attention`."""
        return self.encode(*check_batch(self.config, input_ids, token_type_ids, attention_mask),
                           output_attentions, attention)

    def encode(self, input_ids, token_type_ids, attention_mask, output_attentions=False, attention=None,
               output_positions=None):
        """`forward` on a batch already checked by `check_batch` (models with heads check it themselves).
        With `output_positions` (B, R), [CLS] (0) first for the pooler, sequence_output holds only the final
        vectors at those positions, (B, R, H)."""
        # BEGIN EXERCISE bert_encode: the mask once, the embeddings, the encoder, then the pooler on its output
        # Built once per forward pass; every layer uses it. (B, 1, 1, S) bidirectional, (B, 1, S, S) causal.
        mask = build_attention_mask(attention_mask, attention or self.config.attention)
        x = self.embeddings(input_ids, token_type_ids)  # (B, S, H)
        sequence_output, attentions = self.encoder(x, mask, output_attentions, output_positions)  # (B, S|R, H)
        return BertModelOutput(sequence_output, self.pooler(sequence_output), attentions)
        # END EXERCISE
