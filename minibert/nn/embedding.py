"""Embedding tables: one vector per id, looked up by index (BERT's token, position and segment embeddings).

The lookup is `weight[ids]`; its backward scatter-adds each gradient row into the row of the table its id
chose, summing where an id appears more than once (kernels/scatter.py). The same op gathers the vectors at
the masked positions for the MLM head (model/bert.py). Not part of an attention layer, so in a file of its own.

Shapes: `...` is any leading shape, e.g. (B, S) for a batch of sequences; V rows of the table, H their size.
"""

import numpy as np

from minibert.autograd.tensor import Function, Tensor
from minibert.errors import ShapeError
from minibert.kernels.scatter import scatter_add_rows
from minibert.nn.layers import normal_init
from minibert.nn.module import Module, Parameter


class EmbeddingOp(Function):
    def forward(self, ids, weight):
        if not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"embedding ids must be integers, got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
            bad = ids[(ids < 0) | (ids >= weight.shape[0])].ravel()[0]
            raise ShapeError(f"id {bad} is outside the embedding table of {weight.shape[0]} rows "
                             f"(valid ids are 0..{weight.shape[0] - 1})")
        # BEGIN EXERCISE embedding_lookup: the table's row of each id, (...) -> (..., H); save what backward needs
        self.ids, self.weight_shape = ids, weight.shape
        return weight[ids]  # (..., H)
        # END EXERCISE

    def backward(self, grad_output):
        # BEGIN EXERCISE embedding_op_backward: the gradient rows scatter-added into a (V, H) table; none for the ids
        # out = weight[ids]  ->  each row of weight gets the sum of the gradients at the places its id appears
        grad_weight = scatter_add_rows(self.ids, grad_output.reshape(-1, self.weight_shape[1]),
                                       self.weight_shape[0])  # (V, H)
        return None, grad_weight
        # END EXERCISE


def embedding(ids, weight):
    """Look up one row of `weight` (V, H) per id: out[..., :] = weight[ids[...]]."""
    ids = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    return EmbeddingOp.apply(ids, weight)


class Embedding(Module):
    """A table of vectors, one row per id: embedding(ids) = weight[ids]."""

    def __init__(self, num_embeddings, embedding_dim, rng, std=0.02):
        super().__init__()
        self.weight = Parameter(normal_init(rng, (num_embeddings, embedding_dim), std))  # (V, H)

    def forward(self, ids):
        return embedding(ids, self.weight)  # (...) -> (..., H)
