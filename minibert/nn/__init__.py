"""Layers built from the functional ops: `Module` and `Parameter`, then the pieces of a transformer.

- `module.py`: Module, Parameter, ModuleList (parameters by name, state_dict, train/eval, to(dtype));
- `layers.py`: Linear, Embedding, LayerNorm, Dropout;
- `attention.py`: MultiHeadSelfAttention;
- `feedforward.py`: FeedForward, the widening half of the position-wise network;
- `sublayer.py`: SublayerOutput, post-LN's Dense -> Dropout -> add -> LayerNorm;
- `activations.py`: the `hidden_act` names of BERT configs;
- `fusion.py`: the switch between fused ops and the plain ops they stand for.
"""

from minibert.nn.activations import ACTIVATIONS, activation
from minibert.nn.attention import MultiHeadSelfAttention
from minibert.nn.feedforward import FeedForward
from minibert.nn.fusion import fused_ops, use_fused_ops
from minibert.nn.layers import Dropout, Embedding, LayerNorm, Linear
from minibert.nn.module import Module, ModuleList, Parameter
from minibert.nn.sublayer import SublayerOutput

__all__ = [
    "ACTIVATIONS", "Dropout", "Embedding", "FeedForward", "LayerNorm", "Linear", "Module", "ModuleList",
    "MultiHeadSelfAttention", "Parameter", "SublayerOutput", "activation", "fused_ops", "use_fused_ops",
]
