"""A third real-text task for the ladder: which library a documentation sentence comes from, among the
libraries that minibert's own requirements bring in but that no pretraining corpus here reads.

`package-topics` asks the question of the libraries pip carries; this asks it of others, so that a result
seen on one set of libraries can be checked on a second set written by other authors about other things.
`pip install -r requirements.txt` installs them all: selenium for the browser tests, trio and its helpers
with selenium, pygments with pytest. The task is built exactly as package_topics builds its own (whole
documents to train or dev, sentences of the pretraining corpus left out, labels balanced).
"""

# The labels:
#     async        trio and the small libraries around it: tasks, nurseries, cancellation, sockets
#     browser      selenium and websocket-client: driving a web browser, its elements and its messages
#     highlighting pygments: lexers, formatters and styles that colour source code
# With the versions requirements.txt installed here (trio 0.35, selenium 4.51, pygments 2.21), each label
# keeps at least 1,100 sentences of five words or more once pydocs' are left out. sortedcontainers and attrs
# together keep 484, too few for 300 a class beside a dev set of 200; llvmlite (numba's) keeps 240.

import importlib.util

from minibert.data.corpora.package_topics import build_package_topics
from minibert.errors import DataError

LABELS = {
    "async": ("trio", "trio.*", "outcome", "sniffio", "trio_websocket", "wsproto", "wsproto.*", "h11", "h11.*"),
    "browser": ("selenium", "selenium.*", "websocket", "websocket.*"),
    "highlighting": ("pygments", "pygments.*"),
}


def build_dependency_topics(out_dir, train_per_label=300, dev_per_label=200, seed=0, pretraining_corpus=None):
    """Write train.tsv and dev.tsv of the task to `out_dir`, as `build_package_topics` does; returns their
    paths."""
    missing = [patterns[0] for patterns in LABELS.values() if importlib.util.find_spec(patterns[0]) is None]
    if missing:
        raise DataError(f"the task reads the documentation of {', '.join(missing)}, not installed here; install "
                        "minibert's requirements first: pip install -r requirements.txt")
    return build_package_topics(out_dir, train_per_label, dev_per_label, seed, pretraining_corpus, LABELS)
