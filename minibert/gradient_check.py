"""Finite-difference gradient checking: the referee for every backward in minibert.

For each input x that requires grad, and each entry x[i], the central difference

    (f(x + eps·e_i) - f(x - eps·e_i)) / (2·eps)

approximates df/dx[i] with an error of order eps² (Taylor: the eps¹ terms cancel), but only in float64
(PyTorch's defaults: eps=1e-6, atol=1e-5, rtol=1e-3). A function with a non-scalar output is checked
through a fixed random projection: sum(f(x) * R).
"""

# Why float64: with eps = 1e-6 the error is about 1e-12, far below what a wrong backward gets wrong, but in
# float32 f itself is rounded at about 1e-7 relative, and dividing that rounding by 2e-6 swamps the gradient.
# Hence the float64 rule, and PyTorch's defaults.
# Why a random projection is enough: if the backward were wrong for any output entry, the projected gradient
# would almost surely be wrong too.

import numpy as np

from minibert.autograd.tensor import Tensor, no_grad
from minibert.errors import GradcheckError


def gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, names=None, max_entries=None, seed=0):
    """Check the autograd gradient of `fn(*inputs)` against central finite differences.

    inputs: Tensors; those with requires_grad=True are checked (others, e.g. token ids, pass through).
    names: optional names for the inputs, used in the report (e.g. a model's parameter names).
    max_entries: check at most this many randomly chosen entries of each input (large tensors are sampled,
        never skipped).
    Returns True, or raises GradcheckError naming the input, the worst entry, both values and the errors.
    """
    names = list(names) if names is not None else [f"input {i}" for i in range(len(inputs))]
    checked = [(name, x) for name, x in zip(names, inputs, strict=True)
               if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    for name, x in checked:
        if x.dtype != np.float64:
            raise TypeError(f"gradcheck: {name} is {x.dtype}, but finite differences need float64: in float32 "
                            "the rounding of f (~1e-7) divided by 2*eps swamps the gradient. Convert with "
                            "Tensor(x.data.astype(np.float64), requires_grad=True) or model.to(np.float64)")

    rng = np.random.default_rng(seed)
    projection = None

    def scalar_output():
        nonlocal projection
        out = fn(*inputs)
        if not isinstance(out, Tensor):
            raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
        if projection is None:
            projection = np.ones(()) if out.size == 1 else rng.standard_normal(out.shape)
        return (out * projection).sum() if out.size != 1 else out.reshape(())

    # Analytic gradients, from one backward pass.
    saved_grads = [x.grad for _, x in checked]
    for _, x in checked:
        x.grad = None
    scalar_output().backward()
    analytic = [x.grad if x.grad is not None else np.zeros_like(x.data) for _, x in checked]
    for (_, x), grad in zip(checked, saved_grads, strict=True):
        x.grad = grad

    # Numeric gradients, entry by entry, perturbing each input in place.
    for (name, x), grad in zip(checked, analytic, strict=True):
        flat = x.data.reshape(-1)  # a view: writing to it perturbs x
        entries = np.arange(flat.size)
        if max_entries is not None and flat.size > max_entries:
            entries = np.sort(rng.choice(flat.size, size=max_entries, replace=False))
        numeric = np.empty(len(entries))
        with no_grad():
            for k, i in enumerate(entries):
                # BEGIN EXERCISE central_difference: f at flat[i] ± eps via scalar_output().item(); restore
                original = flat[i]
                flat[i] = original + eps
                f_plus = scalar_output().item()
                flat[i] = original - eps
                f_minus = scalar_output().item()
                flat[i] = original
                numeric[k] = (f_plus - f_minus) / (2 * eps)
                # END EXERCISE
        _compare(name, x.shape, grad.reshape(-1)[entries], numeric, entries, atol, rtol)
    return True


def gradcheck_module(module, fn, *inputs, names=(), **options):
    """gradcheck of `fn(*inputs)` against the inputs and every parameter of `module`, each reported by its
    name (`names` for the inputs, the module's own for its parameters); `options` as gradcheck's."""
    parameter_names, parameters = zip(*module.named_parameters(), strict=True)
    return gradcheck(lambda *values: fn(*values[:len(inputs)]), *inputs, *parameters,
                     names=(*names, *parameter_names), **options)


def _compare(name, shape, analytic, numeric, entries, atol, rtol):
    error = np.abs(analytic - numeric)
    allowed = atol + rtol * np.abs(numeric)
    if np.all(error <= allowed):
        return
    worst = int(np.argmax(error - allowed))
    index = np.unravel_index(entries[worst], shape)
    relative = error[worst] / max(abs(numeric[worst]), 1e-300)
    failing = int(np.sum(error > allowed))
    raise GradcheckError(
        f"gradcheck failed for {name} (shape {shape}): {failing} of {len(entries)} checked entries disagree.\n"
        f"  worst entry {tuple(int(i) for i in index)}: analytic {analytic[worst]:.10g}, "
        f"numeric {numeric[worst]:.10g}\n"
        f"  abs error {error[worst]:.3g} (allowed atol {atol} + rtol {rtol} * |numeric| = {allowed[worst]:.3g}), "
        f"rel error {relative:.3g}")
