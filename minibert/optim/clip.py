"""Global-norm gradient clipping: one bad batch must not throw the model far away.

All gradients are seen as one long vector. If its length (the global L2 norm) exceeds `max_norm`, every
gradient is scaled by max_norm/norm, so the direction is kept and only the step gets shorter. BERT clips
at 1.0 (Google's `optimization.py`: `tf.clip_by_global_norm(grads, clip_norm=1.0)`), as does
`torch.nn.utils.clip_grad_norm_`, which adds 1e-6 to the norm before dividing; we follow Google's
max_norm/norm, so a gradient at or below the threshold is left exactly as it was.
"""

import math

import numpy as np

from minibert.errors import ConfigError


def global_grad_norm(parameters):
    """sqrt(sum of every squared gradient entry) over the parameters that have a gradient."""
    # BEGIN EXERCISE global_grad_norm: the square root of the sum of every gradient entry squared, None skipped
    total = 0.0
    for param in parameters:
        if param.grad is not None:
            flat = param.grad.reshape(-1)
            total += float(np.dot(flat, flat))
    return math.sqrt(total)
    # END EXERCISE


def clip_grad_norm(parameters, max_norm=1.0):
    """Scale all gradients in place so their global norm is at most `max_norm`; return the norm before.

    Parameters whose `.grad` is None are skipped. A non-finite norm (a NaN or inf somewhere) leaves the
    gradients untouched and is returned as it is, so that the training loop can stop and say so.
    """
    if not (isinstance(max_norm, int | float) and max_norm > 0 and math.isfinite(max_norm)):
        raise ConfigError(f"max_norm={max_norm!r} must be a finite number > 0 (BERT clips at 1.0)")
    # BEGIN EXERCISE clip_grad_norm: above max_norm, scale every gradient in place by max_norm/norm; return norm
    parameters = list(parameters)
    total_norm = global_grad_norm(parameters)
    if math.isfinite(total_norm) and total_norm > max_norm:
        scale = max_norm / total_norm
        for param in parameters:
            if param.grad is not None:
                param.grad *= scale
    return total_norm
    # END EXERCISE
