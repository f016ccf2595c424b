"""Where a NaN or an infinity is, so that a run that diverges says which parameter it came from.

A non-finite loss means the forward pass met one: a weight that is already NaN or inf (a previous bad step,
a damaged checkpoint), or activations that overflowed although every weight is finite. A non-finite gradient
norm means the backward pass made one. Backward runs from the loss towards the embeddings, and a NaN made
in one layer spreads into the gradient of every layer below it, so the parameter nearest the loss among
the non-finite ones is where it started; the model lists its parameters from the embeddings up, so that is
the last one in its order.
"""

import numpy as np


def nonfinite_parameters(model, gradients):
    """Names of the parameters whose gradients (or, with gradients=False, weights) hold a NaN or an inf,
    nearest the loss first."""
    names = []
    for name, parameter in model.named_parameters():
        values = parameter.grad if gradients else parameter.data
        if values is not None and not np.isfinite(values).all():
            names.append(name)
    return names[::-1]


def describe_nonfinite(model, gradients):
    """A clause for the error message: which parameter the NaN or inf came from, and how far it spread."""
    names = nonfinite_parameters(model, gradients)
    what = "gradient" if gradients else "weight"
    if not names:
        if gradients:
            return "every gradient is finite, but their squared sum overflowed"
        return "every weight is finite, so the activations overflowed"
    others = f" (and {len(names) - 1} parameter(s) below it)" if len(names) > 1 else ""
    return f"the first non-finite {what} is that of {names[0]}{others}"
