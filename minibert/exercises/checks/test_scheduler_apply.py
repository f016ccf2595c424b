"""Exercise scheduler_apply (lesson 11): `LRScheduler._apply` in minibert/optim/schedule.py.

Each group's learning rate for the coming update is its base rate (the rate it had when the scheduler was
made) times schedule(step_count), never the current rate times it.
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import Adam, LRScheduler


def optimizer_of_two_groups():
    return Adam([{"params": [Parameter(np.zeros(2))], "lr": 0.1}, {"params": [Parameter(np.zeros(3))], "lr": 0.02}])


def test_each_group_gets_its_base_rate_times_the_multiplier():
    """With schedule(t) = 1/(t + 2), after k steps group i's rate is base_i/(k + 2), for k = 0..4."""
    optimizer = optimizer_of_two_groups()
    scheduler = LRScheduler(optimizer, lambda step: 1 / (step + 2))
    for k in range(5):
        rates = [group["lr"] for group in optimizer.param_groups]
        np.testing.assert_allclose(rates, [0.1 / (k + 2), 0.02 / (k + 2)], rtol=1e-12,
                                   err_msg=f"after {k} steps: base rate times schedule({k})")
        scheduler.step()
