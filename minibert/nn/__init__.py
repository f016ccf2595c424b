"""Layers built from the functional ops: `Module` and `Parameter`, then the pieces of a transformer.

- `module.py`: Module, Parameter, ModuleList (parameters by name, state_dict, train/eval, to(dtype));
- `layers.py`: Linear, Embedding, LayerNorm, Dropout;
- `transformer.py`: MultiHeadSelfAttention, FeedForward (the widening half of the position-wise network),
  SublayerOutput (post-LN's Dense -> Dropout -> add -> LayerNorm);
- `activations.py`: the `hidden_act` names of BERT configs.
"""

from minibert.nn.activations import ACTIVATIONS, activation
from minibert.nn.layers import Dropout, Embedding, LayerNorm, Linear
from minibert.nn.module import Module, ModuleList, Parameter
from minibert.nn.transformer import FeedForward, MultiHeadSelfAttention, SublayerOutput

__all__ = [
    "ACTIVATIONS", "Dropout", "Embedding", "FeedForward", "LayerNorm", "Linear", "Module", "ModuleList",
    "MultiHeadSelfAttention", "Parameter", "SublayerOutput", "activation",
]
