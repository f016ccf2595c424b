"""Adam, AdamW and BERT's AdamWeightDecayOptimizer: three update rules, side by side.

All three keep two running averages per entry (Kingma & Ba 2015, "Adam", Algorithm 1), m = β1·m + (1-β1)·g
and v = β2·v + (1-β2)·g², and move each entry by about lr·m/√v, whatever the scale of its gradient:

    rule      weight decay                           step (t = number of steps taken, from 1)
    Adam      g = grad + wd·p   (L2, enters m, v)    p -= lr·m̂/(√v̂ + eps),  m̂ = m/(1-β1^t), v̂ = v/(1-β2^t)
    AdamW     p -= lr·wd·p      (decoupled)          p -= lr·m̂/(√v̂ + eps)
    BertAdam  update = m/(√v + eps) + wd·p           p -= lr·update          (no bias correction)
"""

# Why they differ is said beside each class below. Each update runs in place, slice by slice, with at most
# two reusable scratch arrays, so a step allocates no memory proportional to the model.

import math

import numpy as np

from minibert.errors import ConfigError
from minibert.optim.optimizer import Optimizer
from minibert.validation import is_number

# Entries updated at a time: 256 KB of float32, small enough to stay in a CPU's L2 cache (see _in_slices;
# bench/choices.py times a step both ways, docs/performance.md keeps the figures).
SLICE_SIZE = 65536

# Google's pretraining hyperparameters (run_pretraining.py / optimization.py), for any of the three rules.
BERT_DEFAULTS = {"betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.01}


def update_moments(grad, exp_avg, exp_avg_sq, beta1, beta2, work):
    """m = β1·m + (1-β1)·g and v = β2·v + (1-β2)·g², in place (`work` is scratch of the same shape)."""
    # BEGIN EXERCISE adam_moments: in place: m = β1·m + (1-β1)·g, v = β2·v + (1-β2)·g² (work is scratch)
    exp_avg *= beta1
    np.multiply(grad, 1 - beta1, out=work)
    exp_avg += work
    exp_avg_sq *= beta2
    np.multiply(grad, grad, out=work)
    work *= 1 - beta2
    exp_avg_sq += work
    # END EXERCISE


def bias_corrected_step(param, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, work):
    """p -= lr·m̂/(√v̂ + eps), with m̂ = m/(1-β1^t) and v̂ = v/(1-β2^t), in place.

    Written as PyTorch does, (lr/(1-β1^t))·m / (√v/√(1-β2^t) + eps), which is the same number.
    """
    # BEGIN EXERCISE bias_correction: in place: param -= lr·m̂/(√v̂ + eps), m̂ = m/(1-β1^t), v̂ = v/(1-β2^t)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    np.sqrt(exp_avg_sq, out=work)
    work /= math.sqrt(bias_correction2)
    work += eps
    np.divide(exp_avg, work, out=work)
    work *= lr / bias_correction1
    param -= work
    # END EXERCISE


def _check_number(name, value, hint):
    if not (is_number(value) and value >= 0):
        raise ConfigError(f"{name}={value!r} cannot work; {hint}")


class _AdamFamily(Optimizer):
    """The shared part: arguments, their checks, and the loop over parameters. Subclasses give `update`."""

    state_keys = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr, betas, eps, weight_decay):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})

    def check_hyperparameters(self, group):
        _check_number("lr", group["lr"], "use a finite number >= 0 (BERT pretrains with 1e-4)")
        betas = group["betas"]
        if not (isinstance(betas, tuple | list) and len(betas) == 2
                and all(is_number(beta) and 0 <= beta < 1 for beta in betas)):
            raise ConfigError(f"betas={betas!r} must be two numbers in [0, 1), such as (0.9, 0.999)")
        _check_number("eps", group["eps"], "use a finite number >= 0, such as 1e-6 (BERT) or 1e-8 (PyTorch)")
        _check_number("weight_decay", group["weight_decay"], "use a finite number >= 0, such as 0.01 (BERT)")

    def step(self):
        """Update every parameter that has a gradient; parameters whose `.grad` is None are left alone."""
        # BEGIN EXERCISE optimizer_step: m, v start at 0 on a parameter's first step; count steps; update in slices
        for group, position, param, grad in self.parameters_with_gradients():
            state = self.state.get(position)
            if state is None:
                state = {"step": 0, "exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}
                self.state[position] = state
            state["step"] += 1
            for pieces in _in_slices(param, grad, state["exp_avg"], state["exp_avg_sq"]):
                self.update(*pieces, state["step"], group)
        # END EXERCISE

    def update(self, param, grad, exp_avg, exp_avg_sq, step, group):
        """Apply this rule to one slice of one parameter, in place."""
        raise NotImplementedError


def _in_slices(*arrays):
    """Matching flat slices of same-shaped contiguous arrays, SLICE_SIZE entries at a time.

    Every rule is elementwise, so updating slice by slice gives exactly the same numbers. It is faster
    because one update makes a dozen passes over its arrays: on a slice that fits in the CPU cache they
    cost little, while on a whole 30522x256 embedding each pass reads main memory again.
    """
    flat = [array.reshape(-1) for array in arrays]
    for start in range(0, flat[0].size, SLICE_SIZE):
        yield [array[start : start + SLICE_SIZE] for array in flat]


# `Adam` and `AdamW` take the same arguments and give the same numbers as `torch.optim.Adam` and
# `torch.optim.AdamW` (PyTorch's defaults too: eps 1e-8). Bias correction: m and v start at 0, so early on they
# are too small; dividing by (1-β^t) undoes that. Weight decay: with Adam's L2 term the decay is divided by √v
# like the gradient, so parameters with large gradients are barely decayed. AdamW (Loshchilov & Hutter 2019,
# "Decoupled Weight Decay Regularization") shrinks the parameter directly instead.

class Adam(_AdamFamily):
    """Adam with PyTorch's arguments; `weight_decay` adds an L2 term to the gradient (as torch.optim.Adam)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)

    def update(self, param, grad, exp_avg, exp_avg_sq, step, group):
        beta1, beta2 = group["betas"]
        if group["weight_decay"] != 0:
            decayed_grad = self.work_array(param, slot=1)
            np.multiply(param, group["weight_decay"], out=decayed_grad)  # g = grad + wd·p
            decayed_grad += grad
            grad = decayed_grad
        work = self.work_array(param)
        update_moments(grad, exp_avg, exp_avg_sq, beta1, beta2, work)
        bias_corrected_step(param, exp_avg, exp_avg_sq, step, group["lr"], beta1, beta2, group["eps"], work)


class AdamW(_AdamFamily):
    """Adam with decoupled weight decay, as torch.optim.AdamW: p shrinks by lr·wd·p before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def update(self, param, grad, exp_avg, exp_avg_sq, step, group):
        # BEGIN EXERCISE adamw_update: decoupled decay p -= lr·wd·p first, then the moments and the corrected step
        beta1, beta2 = group["betas"]
        if group["weight_decay"] != 0:
            param *= 1 - group["lr"] * group["weight_decay"]  # p -= lr·wd·p
        work = self.work_array(param)
        update_moments(grad, exp_avg, exp_avg_sq, beta1, beta2, work)
        bias_corrected_step(param, exp_avg, exp_avg_sq, step, group["lr"], beta1, beta2, group["eps"], work)
        # END EXERCISE


# Google's BERT code (`optimization.py`, `AdamWeightDecayOptimizer`) leaves bias correction out; Devlin called
# this "mostly an oversight" that the learning-rate warmup makes harmless, since early steps are tiny anyway.
# Its decay is decoupled like AdamW's, but added inside the update. `BERT_DEFAULTS` spells out Google's values
# so that the other rules can use them as well (see bert_recipe.py).

class BertAdam(_AdamFamily):
    """Google's AdamWeightDecayOptimizer (BERT's `optimization.py`; `AdamWeightDecay` in the TF2 and HF ports):
    no bias correction, decay inside the update.

    The defaults are Google's (`BERT_DEFAULTS`) and the paper's pretraining learning rate, 1e-4. The
    step counter is kept only so that every rule has the same state; this rule does not use it.
    """

    def __init__(self, params, lr=1e-4, betas=BERT_DEFAULTS["betas"], eps=BERT_DEFAULTS["eps"],
                 weight_decay=BERT_DEFAULTS["weight_decay"]):
        super().__init__(params, lr, betas, eps, weight_decay)

    def update(self, param, grad, exp_avg, exp_avg_sq, step, group):
        beta1, beta2 = group["betas"]
        work = self.work_array(param)
        update_moments(grad, exp_avg, exp_avg_sq, beta1, beta2, work)
        update = work
        np.sqrt(exp_avg_sq, out=update)  # update = m / (√v + eps)
        update += group["eps"]
        np.divide(exp_avg, update, out=update)
        if group["weight_decay"] != 0:
            decay = self.work_array(param, slot=1)  # update += wd·p
            np.multiply(param, group["weight_decay"], out=decay)
            update += decay
        update *= group["lr"]  # p -= lr·update
        param -= update
