"""Mean and spread of one metric over the seeds of one arm: what the table prints and the JSON stores.

The spread is the sample standard deviation (n - 1 in the denominator, as `numpy.std(ddof=1)`), the
usual estimate of how much a new seed would differ; min and max are kept beside it, since with 3 seeds
the standard deviation itself is rough. A single seed has no spread (None).
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    mean: float
    std: float | None  # sample standard deviation over the seeds; None with one seed
    low: float
    high: float
    n: int

    def to_dict(self):
        return {"mean": self.mean, "std": self.std, "min": self.low, "max": self.high, "n": self.n}


def summarize(values):
    """The `Summary` of a list of numbers (one per seed)."""
    values = [float(value) for value in values]
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((value - mean) ** 2 for value in values) / (n - 1)) if n > 1 else None
    return Summary(mean, std, min(values), max(values), n)


def summarize_runs(records, arms, metrics):
    """{arm: {metric: Summary}} over finished run records ({"arm", "metrics": {name: value}}), in the
    order of `arms` and `metrics`; an arm or metric with no value yet is left out."""
    table = {}
    for arm in arms:
        values = {metric: [record["metrics"][metric] for record in records
                           if record["arm"] == arm and record["metrics"].get(metric) is not None]
                  for metric in metrics}
        summaries = {metric: summarize(found) for metric, found in values.items() if found}
        if summaries:
            table[arm] = summaries
    return table
