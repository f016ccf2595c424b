"""minibert: BERT built from nothing but NumPy, for reading.

The layers, bottom to top (see the README's map): runtime (threads, BLAS, allocator) → kernels → autograd →
functional and gradcheck → nn → model → io / tokenizer / data / optim → train / finetune → cli. The
profiler (runtime/profile.py) hooks autograd from outside.

Layers run the plain ops; `use_fused_ops()` switches on the fused ones, as the training commands do. The
first computation applies the process plan for threads and memory; `leave_process_alone()` opts out.
"""

from minibert import functional, optim
from minibert.autograd import Tensor, concat, no_grad, stack
from minibert.gradcheck import gradcheck
from minibert.kernels import get_backend, set_backend, use_backend
from minibert.model import (
    PRESETS,
    BertConfig,
    BertForPreTraining,
    BertModel,
    build_attention_mask,
    causal_lm_loss,
    mask_matrix,
    pretraining_loss,
)
from minibert.nn import use_fused_ops
from minibert.runtime import leave_process_alone
from minibert.tokenizer import BertTokenizer, train_wordpiece

__all__ = [
    "PRESETS", "BertConfig", "BertForPreTraining", "BertModel", "BertTokenizer", "Tensor", "build_attention_mask",
    "causal_lm_loss", "concat", "functional", "get_backend", "gradcheck", "leave_process_alone", "mask_matrix",
    "no_grad", "optim", "pretraining_loss", "set_backend", "stack", "train_wordpiece", "use_backend",
    "use_fused_ops",
]
