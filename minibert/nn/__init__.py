"""Layers built from the functional ops: `Module` and `Parameter`, then the pieces of a transformer.

A reading list, not an import hub: import each name from its module (`from minibert.nn.layers import
Linear`), so a reader, and the interpreter, open only the files a layer needs.

- `module.py`: Module, Parameter, ModuleList (parameters by name, state_dict, train/eval, to(dtype));
- `layers.py`: Linear, LayerNorm, Dropout;
- `transformer.py`: MultiHeadSelfAttention, FeedForward (the widening half of the position-wise network, and
  the `hidden_act` names of BERT configs), SublayerOutput (post-LN's Dense -> Dropout -> add -> LayerNorm);
- `embedding.py`: Embedding, the table of vectors looked up by id, and its op.
"""
