"""Optimizers, learning-rate schedules and gradient clipping, with PyTorch's interface.

    optimizer = bert_optimizer(model.named_parameters(), lr=1e-4)  # BERT's recipe in one call
    schedule = partial(linear_warmup_linear_decay, total_steps=1000, warmup_steps=100)
    scheduler = LRScheduler(optimizer, schedule)
    loss.backward(); clip_grad_norm(model.parameters(), 1.0); optimizer.step(); scheduler.step()
    optimizer.zero_grad()

Read `adam.py` first: the three update rules side by side.
"""

from minibert.optim.adam import BERT_DEFAULTS, Adam, AdamW, BertAdam
from minibert.optim.bert_recipe import bert_optimizer, bert_param_groups
from minibert.optim.clip import clip_grad_norm, global_grad_norm
from minibert.optim.optimizer import Optimizer
from minibert.optim.schedule import LRScheduler, constant, linear_warmup_linear_decay, warmup_stable_decay

__all__ = [
    "BERT_DEFAULTS", "Adam", "AdamW", "BertAdam", "LRScheduler", "Optimizer", "bert_optimizer",
    "bert_param_groups", "clip_grad_norm", "constant", "global_grad_norm", "linear_warmup_linear_decay",
    "warmup_stable_decay",
]
