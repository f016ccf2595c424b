"""Exercises generated from the reference code, nbgrader-style.

The reference source marks the bodies a student re-implements with `# BEGIN EXERCISE <id>: <hint>` and
`# END EXERCISE` comment lines (`markers.py`). For lesson NN:

    python -m minibert.exercises list              the lessons and their exercises
    python -m minibert.exercises start NN          write exercises/NN/: minibert with those bodies stubbed
    python -m minibert.exercises check NN          run the exercise tests against that copy
    python -m minibert.exercises reset NN          start over (the old folder is kept as NN.old, NN.2.old, ...)
"""

# `catalog.py` says which exercises belong to which lesson; `checks/test_<id>.py` are their tests;
# `workspace.py` writes and checks a workspace; `scalar.py` is lesson 01's scalar autograd engine;
# `numpy_bert.py` is BERT's forward in plain NumPy, the referee of the layer exercises.

from minibert.exercises.catalog import LESSONS, lesson
from minibert.exercises.markers import MarkerError, find_exercises
from minibert.exercises.workspace import check, reset, restore_reference, scan_package, start

__all__ = ["LESSONS", "MarkerError", "check", "find_exercises", "lesson", "reset", "restore_reference",
           "scan_package", "start"]
