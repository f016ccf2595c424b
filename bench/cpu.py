"""The machine a figure was measured on, in one line (minibert/cpu.py): every benchmark prints it.

The bench scripts import it from here (`from cpu import describe_cpu`); the experiments lab
(`python -m minibert experiment`) stores the same line with its results.
"""

from minibert.cpu import describe_cpu

__all__ = ["describe_cpu"]
