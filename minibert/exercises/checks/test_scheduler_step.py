"""Exercise scheduler_step (lesson 11): `LRScheduler.step` in minibert/optim/schedule.py.

Called after each optimizer.step(): count the update just made, then set the rate of the next one, so after
k calls step_count is k and the rate is the base rate times schedule(k).
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import Adam, LRScheduler


def test_count_then_rate():
    """schedule(t) = 1/(t + 2), base rate 0.1: after k calls, step_count = k and the rate 0.1/(k + 2)."""
    optimizer = Adam([Parameter(np.zeros(2))], lr=0.1)
    scheduler = LRScheduler(optimizer, lambda step: 1 / (step + 2))
    for k in range(1, 5):
        scheduler.step()
        assert scheduler.step_count == k, f"after {k} calls step_count is {scheduler.step_count}"
        np.testing.assert_allclose(optimizer.param_groups[0]["lr"], 0.1 / (k + 2), rtol=1e-12,
                                   err_msg=f"after {k} calls the rate is base times schedule({k})")
