"""The autograd core: `Tensor`, the graph, `backward`, `no_grad`, `unbroadcast` and the basic ops."""

from minibert.autograd.ops import concat, stack
from minibert.autograd.tensor import Function, Tensor, is_grad_enabled, no_grad, unbroadcast

__all__ = ["Function", "Tensor", "concat", "is_grad_enabled", "no_grad", "stack", "unbroadcast"]
