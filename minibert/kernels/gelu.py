"""GELU, the activation of BERT's feed-forward layers (Hendrycks & Gimpel 2016): gelu(x) = x * Phi(x).

Phi is the standard normal CDF. Two forms, the values of `approximate` (`GELU_APPROXIMATIONS`):
- "none", the exact one: Phi(x) = 0.5 * (1 + erf(x / sqrt 2)). The paper's, the first Google release's and
  HuggingFace's `hidden_act="gelu"`.
- "tanh", the approximation Google's code later switched to (`gelu_new`):
  Phi(x) ~ 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).

Both backends compute erf with the standard library's `math.erf`: NumPy has none, so the reference applies it
element by element (`np.frompyfunc`: slow, and fine for reading and checking), and Numba compiles it into the
kernel. Shapes: elementwise, any shape; the kernels see x flattened to (n,).
"""

# x^3 is written x * x * x: NumPy's float32 power is a slow general pow, the products are cheap.

import math

import numpy as np
from numba import njit, prange

from minibert.kernels.dispatch import choose, float_array, like, same_shape

GELU_APPROXIMATIONS = ("none", "tanh")  # as torch.nn.functional.gelu names them
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)  # the normal density's factor: phi(x) = exp(-x²/2) / √(2π)
CUBIC = 0.044715

_erf_each = np.frompyfunc(math.erf, 1, 1)  # math.erf on every element (an object array out)


def check_approximate(approximate, op):
    if approximate not in GELU_APPROXIMATIONS:
        raise ValueError(f"{op}: approximate={approximate!r} is not a GELU form; use 'none' (exact, erf) "
                         "or 'tanh'")


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy, math.erf element by element)

def erf_numpy(x):
    """math.erf of every entry of a float array, in x's dtype."""
    return _erf_each(x).astype(x.dtype)


def gelu_forward_numpy(x, approximate="none"):
    # BEGIN EXERCISE gelu_forward: x·Φ(x); exact: Φ(x) = (1 + erf(x/√2))/2; tanh form: tanh(√(2/π)(x + 0.044715x³))
    if approximate == "tanh":
        u = SQRT_2_OVER_PI * (x + CUBIC * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(u))
    return 0.5 * x * (1.0 + erf_numpy(x * INV_SQRT_2))
    # END EXERCISE


def gelu_backward_numpy(grad_y, x, approximate="none"):
    # BEGIN EXERCISE gelu_backward: grad_y times dy/dx; exact: Φ(x) + x·φ(x); tanh form: differentiate through u
    if approximate == "tanh":
        # y = 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3)
        # dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,  du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        th = np.tanh(SQRT_2_OVER_PI * (x + CUBIC * x * x * x))
        du_dx = SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * x * x)
        return grad_y * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du_dx)
    # y = x Phi(x)  =>  dy/dx = Phi(x) + x phi(x), with phi(x) = exp(-x^2 / 2) / sqrt(2 pi) the normal density
    cdf = 0.5 * (1.0 + erf_numpy(x * INV_SQRT_2))
    pdf = INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return grad_y * (cdf + x * pdf)
    # END EXERCISE


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: the same formulas, element by element in float64, in parallel

@njit(cache=True, inline="always")
def gelu_and_slope(v, tanh_form):
    """(gelu(v), gelu'(v)) of one float64 number: the formulas of the references above."""
    if tanh_form:
        th = math.tanh(SQRT_2_OVER_PI * (v + CUBIC * v * v * v))
        du_dx = SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * v * v)
        return 0.5 * v * (1.0 + th), 0.5 * (1.0 + th) + 0.5 * v * (1.0 - th * th) * du_dx
    cdf = 0.5 * (1.0 + math.erf(v * INV_SQRT_2))
    return v * cdf, cdf + v * INV_SQRT_2PI * math.exp(-0.5 * v * v)


@njit(parallel=True, cache=True)
def _gelu_flat(x, tanh_form):
    # x (n,) -> y (n,)
    y = np.empty_like(x)
    for i in prange(x.size):
        y[i] = gelu_and_slope(np.float64(x[i]), tanh_form)[0]
    return y


@njit(parallel=True, cache=True)
def _gelu_backward_flat(grad_y, x, tanh_form):
    # grad_y, x (n,) -> grad_x (n,) = grad_y * gelu'(x)
    grad_x = np.empty_like(x)
    for i in prange(x.size):
        grad_x[i] = grad_y[i] * gelu_and_slope(np.float64(x[i]), tanh_form)[1]
    return grad_x


def gelu_forward_numba(x, approximate="none"):
    flat = np.ascontiguousarray(x).reshape(-1)
    return _gelu_flat(flat, approximate == "tanh").reshape(x.shape)


def gelu_backward_numba(grad_y, x, approximate="none"):
    flat_grad, flat_x = np.ascontiguousarray(grad_y).reshape(-1), np.ascontiguousarray(x).reshape(-1)
    return _gelu_backward_flat(flat_grad, flat_x, approximate == "tanh").reshape(x.shape)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def gelu_forward(x, approximate="none"):
    """y = x * Phi(x); approximate "none" (exact, erf) or "tanh"."""
    check_approximate(approximate, "gelu_forward")
    x = float_array(x, "x", "gelu_forward")
    return choose(gelu_forward_numpy, gelu_forward_numba)(x, approximate)


def gelu_backward(grad_y, x, approximate="none"):
    """grad_x = grad_y * gelu'(x), for the same `approximate` as the forward."""
    check_approximate(approximate, "gelu_backward")
    x = float_array(x, "x", "gelu_backward")
    grad_y = like(grad_y, x, "grad_y", "gelu_backward")
    same_shape(grad_y, "grad_y", x, "x", "gelu_backward")
    return choose(gelu_backward_numpy, gelu_backward_numba)(grad_y, x, approximate)
