"""pytest settings of an exercise workspace, copied there as conftest.py by `minibert.exercises start`.

1. The workspace's own copy of minibert, the one holding your code, goes first on the import path.
2. Kernels run on the NumPy backend: the exercises are the NumPy references (and a fresh copy of the Numba
   kernels would spend a minute compiling).
3. After the run, a table says which exercise passes, which fails, and the first reason it fails.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ["MINIBERT_BACKEND"] = "numpy"

from hypothesis import HealthCheck, settings  # noqa: E402

import minibert  # noqa: E402

if Path(minibert.__file__).resolve().parent != HERE / "minibert":
    raise RuntimeError(f"the tests imported minibert from {Path(minibert.__file__).parent}, not from this "
                       f"workspace ({HERE / 'minibert'}); run them from the folder above it with "
                       f"`python -m minibert.exercises check` or `python -m pytest {HERE.name}`")

settings.register_profile("exercises", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("exercises")

METADATA = json.loads((HERE / ".exercise.json").read_text(encoding="utf-8"))
RESULTS = {entry["id"]: {"passed": 0, "failed": 0, "why": None} for entry in METADATA["exercises"]}
if METADATA["lesson"] == "capstone":  # the workspace's test_capstone.py: the whole BERT and its loop, end to end
    RESULTS["capstone"] = {"passed": 0, "failed": 0, "why": None}


def _exercise_of(nodeid):
    """tests/test_<id>.py::test_name -> <id>"""
    file_name = nodeid.split("::")[0].rsplit("/", 1)[-1]
    return file_name.removeprefix("test_").removesuffix(".py")


def _reason(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return f"{report.nodeid.split('::')[-1]}: " + " / ".join(lines[:4])


def pytest_runtest_logreport(report):
    result = RESULTS.get(_exercise_of(report.nodeid))
    if result is None:
        return
    if report.failed:
        result["failed"] += 1
        result["why"] = result["why"] or _reason(report)
    elif report.passed and report.when == "call":
        result["passed"] += 1


def pytest_terminal_summary(terminalreporter):
    write = terminalreporter.write_line
    write("")
    write(f"lesson {METADATA['lesson']} ({METADATA['title']}):")
    rows = [(entry["id"], f"{entry['path']}:{entry['line']}") for entry in METADATA["exercises"]]
    if "capstone" in RESULTS:
        rows.append(("capstone", "end to end: HuggingFace's outputs, the whole gradient, training"))
    for exercise_id, where in rows:
        result = RESULTS[exercise_id]
        if result["failed"]:
            status = f"FAILS  {result['failed']} of {result['failed'] + result['passed']} tests"
        elif result["passed"]:
            status = f"passes {result['passed']} tests"
        else:
            status = "not run"
        write(f"  {exercise_id:<26} {status}   ({where})")
        if result["why"]:
            write(f"      why: {result['why']}")
    (HERE / ".results.json").write_text(json.dumps(RESULTS, indent=2) + "\n", encoding="utf-8")
