"""minibert: BERT built from nothing but NumPy, for reading.

The layers, bottom to top (docs/design.md): kernels → autograd → functional and gradient_check → nn → config →
io → model → tokenizer / data / optim → fast → train → inspect → finetune → cli. The core (autograd,
functional, nn, model) is written once, in the paper's formulas; speed is asked for with
`minibert.fast.accelerate(model)` (and `minibert.fast.process_plan()` for threads and memory), as the training
commands do. Importing or using the core changes nothing in the process.
"""

import importlib

# Each public name and the module it lives in. They are imported when first used (PEP 562's module
# __getattr__), not here: `python -m minibert` then sets up Ctrl-C before the kernels load, and a command
# that needs no model (vocab, data) does not pay for loading Numba.
_WHERE = {
    "fast": "minibert.fast", "functional": "minibert.functional", "optim": "minibert.optim",
    "Tensor": "minibert.autograd", "concat": "minibert.autograd", "no_grad": "minibert.autograd",
    "stack": "minibert.autograd", "gradcheck": "minibert.gradient_check",
    "gradcheck_module": "minibert.gradient_check",
    "get_backend": "minibert.kernels.dispatch", "set_backend": "minibert.kernels.dispatch",
    "use_backend": "minibert.kernels.dispatch", "PRESETS": "minibert.model",
    "BertConfig": "minibert.model", "BertForPreTraining": "minibert.model", "BertModel": "minibert.model",
    "build_attention_mask": "minibert.model", "causal_lm_loss": "minibert.model", "mask_matrix": "minibert.model",
    "pretraining_loss": "minibert.model", "BertTokenizer": "minibert.tokenizer",
    "train_wordpiece": "minibert.tokenizer", "SentenceEncoder": "minibert.inspect.sentence_encoder",
}


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'minibert' has no attribute {name!r}")
    module = importlib.import_module(_WHERE[name])
    value = module if module.__name__ == f"minibert.{name}" else getattr(module, name)
    globals()[name] = value  # found once, then an ordinary attribute
    return value


__all__ = [
    "PRESETS", "BertConfig", "BertForPreTraining", "BertModel", "BertTokenizer", "SentenceEncoder", "Tensor",
    "build_attention_mask", "causal_lm_loss", "concat", "fast", "functional", "get_backend", "gradcheck",
    "gradcheck_module", "mask_matrix", "no_grad", "optim", "pretraining_loss", "set_backend", "stack",
    "train_wordpiece", "use_backend",
]
