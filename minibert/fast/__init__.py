"""The speed layer: everything in minibert that exists only for speed, applied by explicit calls.

The core (autograd, functional, nn, model) holds one body per op and per layer, the paper's formulas, and
imports nothing from here. Like `torch.compile`, speed is asked for:

    model = minibert.fast.accelerate(model)     # fused layers: the same numbers, in fewer passes over memory
    with minibert.fast.process_plan():          # threads and memory shared out for training
        ...train...

- `accelerate(model, prune_last_layer=False)` swaps each layer that has a fast twin (modules.py) for it, in
  place and with the same parameters, so names, `state_dict` and checkpoints do not change; with
  `prune_last_layer=True`, a BertForPreTraining's last layer also computes only the rows its heads read
  (pruning.py). Outputs and gradients equal the core's within float32 rounding (tests/test_fast.py).
- `process_plan(threads)` (process.py): how the process runs the arrays: BLAS and Numba threads, matmuls in
  parts, glibc's allocator. Nothing changes the process until it is entered.
- `profile_ops()` (profile.py): where a step spends its time, op by op.
The fused ops (ops.py) run on the fused kernels (kernels/), each beside its plain-NumPy reference.
"""

from minibert.fast import pruning
from minibert.fast.modules import fused
from minibert.fast.process import process_plan
from minibert.fast.profile import profile_ops


def accelerate(model, prune_last_layer=False):
    """Swap `model`'s layers for their fused twins (same parameters), in place; returns the model."""
    _swap_layers(model)
    if prune_last_layer:
        pruning.prune_last_layer(model)
    return model


def _swap_layers(module):
    for name, child in list(module._modules.items()):
        twin = fused(child)
        setattr(module, name, twin)
        _swap_layers(twin)


__all__ = ["accelerate", "process_plan", "profile_ops"]
