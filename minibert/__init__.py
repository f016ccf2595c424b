"""minibert: BERT built from nothing but NumPy, for reading.

The layers, bottom to top (docs/design.md): kernels → autograd → functional and gradcheck → nn → model →
io / tokenizer / data / optim → fast → train / finetune → cli. The core (autograd, functional, nn, model)
is written once, in the paper's formulas; speed is asked for with `minibert.fast.accelerate(model)` (and
`minibert.fast.process_plan()` for threads and memory), as the training commands do. Importing or using the
core changes nothing in the process.
"""

from minibert import fast, functional, optim
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
from minibert.tokenizer import BertTokenizer, train_wordpiece
from minibert.train.sentence_encoder import SentenceEncoder

__all__ = [
    "PRESETS", "BertConfig", "BertForPreTraining", "BertModel", "BertTokenizer", "SentenceEncoder", "Tensor",
    "build_attention_mask", "causal_lm_loss", "concat", "fast", "functional", "get_backend", "gradcheck",
    "mask_matrix", "no_grad", "optim", "pretraining_loss", "set_backend", "stack",
    "train_wordpiece", "use_backend",
]
