"""BERT's optimizer recipe: which parameters are decayed, and Google's hyperparameters, in one call.

Google's `optimization.py` decays every weight matrix and embedding, but not LayerNorm's scale and shift
or any bias (`exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"]`, matched against the
parameter's name). Here the rule builds PyTorch-style parameter groups, so that any of the three update
rules can apply it:

    optimizer = AdamW(bert_param_groups(model.named_parameters()), lr=1e-4, **BERT_DEFAULTS)
or, the same thing: `optimizer = bert_optimizer(model.named_parameters(), lr=1e-4, rule="adamw")`.
"""

# Why not decay them: shrinking a bias or a LayerNorm gain towards 0 does not make the model simpler, it only
# moves it away from its working point.

from minibert.errors import ConfigError
from minibert.optim.adam import BERT_DEFAULTS, Adam, AdamW, BertAdam
from minibert.optim.layer_decay import layer_decay_groups

# Substrings of a parameter name that switch weight decay off (Google's list; HF names match it too:
# `bert.encoder.layer.0.attention.output.LayerNorm.weight`, `...dense.bias`, `cls.predictions.bias`).
NO_DECAY_NAME_PARTS = ("LayerNorm", "layer_norm", "bias")

RULES = {"bert_adam": BertAdam, "adamw": AdamW, "adam": Adam}


def bert_param_groups(named_parameters, weight_decay=BERT_DEFAULTS["weight_decay"]):
    """Two parameter groups: decayed weights, then LayerNorm and bias parameters with weight_decay=0.

    `named_parameters` yields (name, parameter) pairs, as `model.named_parameters()` does. Each group also
    lists its parameter names under "names", which shows a reader what was excluded and lets
    `load_state_dict` check that a checkpoint belongs to the same model. A group with no parameters is
    left out.
    """
    decayed = {"params": [], "names": [], "weight_decay": weight_decay}
    not_decayed = {"params": [], "names": [], "weight_decay": 0.0}
    for name, param in named_parameters:
        group = not_decayed if any(part in name for part in NO_DECAY_NAME_PARTS) else decayed
        group["params"].append(param)
        group["names"].append(name)
    return [group for group in (decayed, not_decayed) if group["params"]]


def bert_optimizer(named_parameters, lr, rule="bert_adam", weight_decay=BERT_DEFAULTS["weight_decay"],
                   betas=BERT_DEFAULTS["betas"], eps=BERT_DEFAULTS["eps"], by_depth=None):
    """An optimizer with BERT's weight-decay exclusions and, unless told otherwise, BERT's defaults
    (`BERT_DEFAULTS`): the one builder that pretraining, fine-tuning and the lessons use.

    `rule` picks the update: "bert_adam" (Google's, no bias correction), "adamw" or "adam".
    `by_depth`: fine-tuning's rate per layer, {"num_layers", "decay", "head_lr"} (`layer_decay.py`).
    """
    if rule not in RULES:
        raise ConfigError(f"rule={rule!r} is not an optimizer; choose one of {sorted(RULES)}")
    groups = bert_param_groups(named_parameters, weight_decay)
    if by_depth is not None:
        groups = layer_decay_groups(groups, lr=lr, **by_depth)
    return RULES[rule](groups, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
