"""minibert: BERT built from nothing but NumPy, for reading.

The layers, bottom to top (see the README's map): kernels → autograd → functional and gradcheck → nn →
model → io / tokenizer / data / optim → train → cli.
"""

from minibert import functional
from minibert.autograd import Tensor, concat, no_grad, stack
from minibert.gradcheck import gradcheck
from minibert.kernels import get_backend, set_backend, use_backend

__all__ = [
    "Tensor", "concat", "functional", "get_backend", "gradcheck", "no_grad", "set_backend", "stack", "use_backend",
]
