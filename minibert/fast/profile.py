"""Where a training step spends its time, op by op: an opt-in timer around every forward and backward.

    with profile_ops() as times:
        loss = pretraining_loss(model(...), ...)[0]
        loss.backward()
    print(times.table())

Each `Function` subclass (MatMul, GELU, LayerNorm, ...) gets one row: how often it ran and the seconds its
forward and its backward took, kernels included.
"""

# Inside the block every `Function` subclass's forward and backward are wrapped by a timer, and put back after:
# the engine (autograd/tensor.py) knows nothing of it.

import time
from collections import defaultdict
from contextlib import contextmanager

from minibert.autograd.tensor import Function


class OpTimes:
    """Seconds per op name and phase ("forward" or "backward"), and call counts.

    `label(function, args)`, if given, names the row instead of the op's class name: e.g. to tell the
    attention's batched matmuls from the other matmuls by the arrays they get. `clock`: the seconds counter,
    wall time by default; `time.process_time` counts only this process's CPU time, which other jobs on the
    cores do not inflate (on one thread, where no thread waits for another).
    """

    def __init__(self, label=None, clock=time.perf_counter):
        self.label, self.clock = label, clock
        self.seconds = defaultdict(float)  # (op name, phase) -> seconds
        self.calls = defaultdict(int)  # (op name, phase) -> calls

    def timed(self, method, phase):
        """`method` (an op class's forward or backward) with its duration added to the op's row."""
        def run_and_time(function, *args, **kwargs):
            start = self.clock()
            result = method(function, *args, **kwargs)
            key = (function.name if self.label is None else self.label(function, args), phase)
            self.seconds[key] += self.clock() - start
            self.calls[key] += 1
            return result
        return run_and_time

    def ops(self):
        """Op names, the costliest (forward + backward) first."""
        names = {name for name, _ in self.seconds}
        return sorted(names, key=lambda name: -self.total(name))

    def total(self, name=None):
        """Seconds of one op (both phases), or of all ops."""
        return sum(seconds for (op, _), seconds in self.seconds.items() if name in (None, op))

    def table(self, title="op"):
        """One line per op: calls, forward and backward milliseconds, share of the total."""
        total = self.total() or 1.0
        lines = [f"{title:16s} {'calls':>5s} {'forward ms':>11s} {'backward ms':>12s} {'share':>6s}"]
        for name in self.ops():
            forward, backward = self.seconds[(name, "forward")], self.seconds[(name, "backward")]
            lines.append(f"{name:16s} {self.calls[(name, 'forward')]:5d} {forward * 1e3:11.1f} "
                         f"{backward * 1e3:12.1f} {(forward + backward) / total:6.1%}")
        return "\n".join(lines)


@contextmanager
def profile_ops(label=None, clock=time.perf_counter):
    """Time every op's forward and backward inside the block; yields the `OpTimes` that collects them."""
    times = OpTimes(label, clock)
    originals = [(op, phase, op.__dict__[phase]) for op in _every_op() for phase in ("forward", "backward")
                 if phase in op.__dict__]
    for op, phase, method in originals:
        setattr(op, phase, times.timed(method, phase))
    try:
        yield times
    finally:
        for op, phase, method in originals:
            setattr(op, phase, method)


def _every_op():
    """Every subclass of `Function` defined so far, at any depth."""
    found, stack = [], [Function]
    while stack:
        for subclass in stack.pop().__subclasses__():
            found.append(subclass)
            stack.append(subclass)
    return found
