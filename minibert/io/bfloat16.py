"""bfloat16: float32 with the low 16 bits of the mantissa cut off.

bfloat16 ("brain float", Google Brain) keeps float32's sign bit and 8 exponent bits but only 7 of its 23
mantissa bits. So it has float32's range with about 3 decimal digits, and a bfloat16 number is simply the
high half of a float32 bit pattern. NumPy has no bfloat16 type, so we hold the 16-bit patterns in a uint16
array and convert with bit shifts.

    float32 bits:  s eeeeeeee mmmmmmm mmmmmmmmmmmmmmmm
    bfloat16 bits: s eeeeeeee mmmmmmm                   (the high 16 bits)
"""

import numpy as np


def bf16_bits_to_float32(bits):
    """Widen bfloat16 bit patterns (uint16) to float32 exactly: put them in the high half, zeros below."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bf16_bits(values):
    """Round float32 values to the nearest bfloat16, ties to even, and return the uint16 bit patterns.

    Cutting the low 16 bits would round toward zero, a bias that adds up over millions of weights.
    Adding 0x7FFF plus the lowest kept bit before cutting rounds to nearest, and an exact tie (low half
    0x8000) goes to the pattern whose last kept bit is 0: IEEE 754's default rounding. A carry out of the
    mantissa correctly bumps the exponent; past the largest bfloat16 it gives infinity.
    Float64 input is first rounded to float32.
    """
    values = np.asarray(values, dtype=np.float32)
    # Work on a flat copy: uint32 arithmetic on arrays wraps silently, as the carry trick needs.
    bits = values.reshape(-1).view(np.uint32)
    lowest_kept_bit = (bits >> 16) & 1
    rounded = ((bits + np.uint32(0x7FFF) + lowest_kept_bit) >> 16).astype(np.uint16)
    # NaN must stay NaN: rounding could carry its mantissa into the exponent and give infinity.
    # Keep its sign and top bits and set the top mantissa bit, which makes it a quiet NaN.
    is_nan = np.isnan(bits.view(np.float32))
    quiet_nan = ((bits >> 16) | 0x0040).astype(np.uint16)
    return np.where(is_nan, quiet_nan, rounded).reshape(values.shape)


def round_to_bf16(values):
    """The float32 values bfloat16 can hold that are nearest to `values` (what a bf16 round trip gives)."""
    return bf16_bits_to_float32(float32_to_bf16_bits(values))
