"""One training step: `train_step` is the pretraining step, `checked_update` the update after any loss.

forward -> MLM + NSP loss -> backward -> clip to global norm 1.0 (Google's optimization.py) -> optimizer
step -> schedule step. A loss or gradient norm that is not a finite number stops training before any weight
changes (`TrainingDiverged`, naming the parameter the NaN or inf came from), so the weights and the last
checkpoint stay good. The pretraining loop (pretraining_loop.py), the experiments, the probe, the benchmarks
and the lessons take their pretraining steps with `train_step`; fine-tuning and the lessons' other losses
call `checked_update` on theirs.
"""

import math
import time
from dataclasses import dataclass

from minibert.errors import MinibertError
from minibert.model import pretraining_loss
from minibert.optim import clip_grad_norm
from minibert.train.evaluate import forward_batch
from minibert.train.metrics import masked_lm_correct, next_sentence_correct
from minibert.train.nonfinite import describe_nonfinite


class TrainingDiverged(MinibertError, ArithmeticError):
    """The loss or the gradient stopped being a finite number."""


def refuse_if_not_finite(value, what, model, optimizer=None, advice=""):
    """`value` (the loss, or the gradient norm with the optimizer whose gradients to clear) if it is a finite
    number; else `TrainingDiverged` naming where the NaN or inf came from, then `advice`. Returns the value."""
    if not math.isfinite(value):
        where = describe_nonfinite(model, gradients=optimizer is not None)
        if optimizer is not None:
            optimizer.zero_grad()
        raise TrainingDiverged(f"the {what} is {value}; {where}{advice}")
    return value


def checked_update(loss, model, parameters, optimizer, scheduler, max_grad_norm, loss_name="loss", advice=""):
    """backward -> clip -> optimizer step -> schedule step; returns the loss value and the gradient norm
    before clipping. Raises `TrainingDiverged` before any weight changes when either is not finite."""
    # BEGIN EXERCISE update_step: refuse a non-finite loss; backward, clip, refuse a non-finite norm; step, schedule
    value = refuse_if_not_finite(loss.item(), loss_name, model, advice=advice)
    loss.backward()
    grad_norm = clip_grad_norm(parameters, max_grad_norm)
    refuse_if_not_finite(grad_norm, "gradient norm", model, optimizer, advice)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return value, grad_norm
    # END EXERCISE


@dataclass
class StepResult:
    loss: float
    mlm_loss: float
    nsp_loss: float | None
    mlm_right: int
    mlm_total: int
    nsp_right: int
    nsp_total: int
    grad_norm: float  # before clipping
    lr: float  # the learning rate this step used
    seq_length: int  # tokens per sequence of the batch
    seconds: float  # the step's wall time, batch in hand to weights updated


def train_step(model, parameters, optimizer, scheduler, batch, config):
    """One pretraining step on `batch`, with `config`'s `use_nsp` and `max_grad_norm`; returns its StepResult:
    its losses, its masked-LM and NSP accuracy counts, its rate and its time."""
    # BEGIN EXERCISE train_step: note the rate; forward at the masked slots, MLM + NSP loss, checked_update, counts
    started, lr = time.perf_counter(), optimizer.param_groups[0]["lr"]
    # forward: the MLM head on the masked positions only; the loss: MLM + NSP (paper §3.1)
    output = forward_batch(model, batch)
    loss, mlm_loss, nsp_loss = pretraining_loss(output, batch["masked_lm_ids"], batch["masked_lm_weights"],
                                                batch["next_sentence_labels"], use_nsp=config.use_nsp)
    value, grad_norm = checked_update(loss, model, parameters, optimizer, scheduler, config.max_grad_norm)
    mlm_right, mlm_total = masked_lm_correct(output.mlm_logits.data, batch["masked_lm_ids"],
                                             batch["masked_lm_weights"])
    nsp_right, nsp_total = next_sentence_correct(output.nsp_logits.data, batch["next_sentence_labels"])
    return StepResult(value, mlm_loss.item(), nsp_loss.item() if nsp_loss is not None else None, mlm_right,
                      mlm_total, nsp_right, nsp_total, grad_norm, lr, batch["input_ids"].shape[1],
                      time.perf_counter() - started)
    # END EXERCISE
