"""Shared test settings.

Every test that runs a kernel takes the `backend` fixture, so it runs twice: once on the plain-NumPy
references and once on the Numba kernels (the one switch of `minibert.set_backend`).
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Hypothesis: a modest number of examples keeps the suite under 10 minutes on 2 cores; deadline off because
# the first call of a Numba kernel compiles (or loads from cache) inside the test.
settings.register_profile("minibert", max_examples=int(os.environ.get("MINIBERT_EXAMPLES", "25")), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("minibert")


@pytest.fixture(params=["numpy", "numba"])
def backend(request):
    """Run the test on one backend, then restore the previous one."""
    from minibert.kernels.dispatch import use_backend
    with use_backend(request.param):
        yield request.param


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """The small synthetic corpus (helpers.make_small_corpus), built once per session."""
    from helpers import make_small_corpus
    return make_small_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
