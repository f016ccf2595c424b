"""The speed layer: everything in minibert that exists only for speed, applied by explicit calls.

The core (autograd, functional, nn, model) holds one body per op and per layer, the paper's formulas, and
imports nothing from here. Like `torch.compile`, speed is asked for:

    model = minibert.fast.accelerate(model)     # fused layers: the same numbers, in fewer passes over memory
    with minibert.fast.process_plan():          # threads and memory shared out for training
        ...train...

- `accelerate(model, prune_last_layer=False)` swaps each layer that has a fast twin (modules.py) for it, in
  place and with the same parameters, so names, `state_dict` and checkpoints do not change; with
  `prune_last_layer=True`, a BertForPreTraining's encoder is swapped too, for one whose last layer computes
  only the rows the heads read (`PrunedEncoder`). Outputs and gradients equal the core's within float32
  rounding (tests/test_fast.py).
- `process_plan(threads)` (process.py): how the process runs the arrays: BLAS and Numba threads, matmuls in
  parts, glibc's allocator. Nothing changes the process until it is entered.
- `profile_ops()` (profile.py): where a step spends its time, op by op.
The fused ops (ops.py) run on the fused kernels (kernels/), each beside its plain-NumPy reference, and
multiply with the products the plan shares among its threads (fast/kernels/matmul.py; threads.py holds the thread
counts the speed layer's kernels run on).
"""

from minibert.errors import ConfigError
from minibert.fast.modules import FAST_TWINS, PRUNED_TWINS, twin_of
from minibert.fast.process import process_plan
from minibert.fast.profile import profile_ops
from minibert.model import BertForPreTraining


def accelerate(model, prune_last_layer=False):
    """Swap `model`'s layers for their fast twins (same parameters), in place; returns the model."""
    if prune_last_layer and not isinstance(model, BertForPreTraining):
        raise ConfigError(f"the last layer can be pruned in a BertForPreTraining only (its heads read [CLS] and "
                          f"the masked positions), not in a {type(model).__name__}")
    _swap_layers(model, PRUNED_TWINS if prune_last_layer else FAST_TWINS)
    return model


def _swap_layers(module, twins):
    for name, child in list(module._modules.items()):
        twin = twin_of(child, twins)
        setattr(module, name, twin)
        _swap_layers(twin, twins)


__all__ = ["accelerate", "process_plan", "profile_ops"]
