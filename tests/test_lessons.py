"""Every lesson script runs to completion in quick mode, in its own process, and saves the pictures it
announces as well-formed SVG.

Lessons are found by name (lessons/NN_*.py, and NNa_*.py for a lesson placed after lesson NN), so a lesson added
later is tested without editing this file. A lesson asserts what it prints: a broken point fails its run here.
A lesson counts its training in steps, never in minutes (checked below), so what it asserts does not depend
on the machine's speed; bench/lessons.py measures how long each takes (docs/performance.md has the times), not
this test. The timeout here only catches a lesson that hangs: on a slow 2-core machine the longest lessons
take minutes, more beside another lesson on the other core. Pictures go to a temporary
folder (MINIBERT_LESSON_OUTPUT), not to lessons/output.
"""

import ast
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from minibert.train import run_preset

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSON_NAME = re.compile(r"(\d\d)([a-z]?)_([a-z0-9_]+)\.py")
LESSONS = sorted(path for path in LESSONS_DIR.glob("[0-9][0-9]*_*.py") if LESSON_NAME.fullmatch(path.name))
HANG_SECONDS = 900  # 15 minutes: far beyond what any lesson takes, even on the slowest machine


@pytest.mark.parametrize("script", LESSONS, ids=[path.stem for path in LESSONS])
def test_lesson_runs_in_quick_mode(script, tmp_path):
    """`python lessons/NN_topic.py` exits 0 from any working directory, prints something, each picture it
    reports saving exists and parses as XML, and each page it reports saving holds its data."""
    env = {**os.environ, "MINIBERT_LESSON_OUTPUT": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=HANG_SECONDS, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.strip()
    for saved in re.findall(r"picture saved: (\S+\.svg)", done.stdout):
        root = ET.parse(saved).getroot()
        assert root.tag.endswith("svg")
    for saved in re.findall(r"page saved: (\S+\.html)", done.stdout):
        assert '<script type="application/json" id="data">{' in Path(saved).read_text(encoding="utf-8")


def test_lessons_are_numbered_without_gaps():
    """Lessons start at 01 and no number is skipped or used twice; a lettered lesson (05a, 05b) follows its
    numbered one, in letter order; and no two lessons share a topic name."""
    parts = [LESSON_NAME.fullmatch(path.name).groups() for path in LESSONS]
    numbers = sorted({int(number) for number, _, _ in parts})
    assert numbers == list(range(1, len(numbers) + 1))
    for number, letter, _ in parts:
        if letter:
            letters = sorted(other for n, other, _ in parts if n == number and other)
            assert (number, "", ) in [(n, lt) for n, lt, _ in parts] and letters == [
                chr(ord("a") + i) for i in range(len(letters))], (number, letters)
    names = [name for _, _, name in parts]
    assert len(names) == len(set(names)), sorted(name for name in names if names.count(name) > 1)


def clock_settings(source):
    """What in `source` gives a run a time budget, as (line, text): a `minutes` or `eval_every_minutes`
    keyword set to anything but None, and a `run_preset` call of a preset with minutes of its own (`mini`'s
    15) that does not set minutes=None."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in ("minutes", "eval_every_minutes") and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "run_preset"
              and node.args and isinstance(node.args[0], ast.Constant)
              and run_preset(node.args[0].value).minutes is not None
              and "minutes" not in {keyword.arg for keyword in node.keywords}):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_lesson_trains_against_the_clock():
    """No lesson (nor lessons/lab.py, which three of them share) gives a run a time budget: a run cut short by
    a busy machine changes what the lesson asserts after it (lesson 12 once stopped at its 0.6-minute cap at
    step 81 of 500, and its loss assert failed). The finder itself is checked on such lines first."""
    assert clock_settings('run_preset("tiny", steps=500, minutes=0.6)') == [(1, "minutes=0.6")]
    assert clock_settings('run_preset("tiny", eval_every_minutes=1.0, minutes=None)') == [
        (1, "eval_every_minutes=1.0")]
    assert clock_settings('run_preset("mini", steps=800)') == [(1, "run_preset('mini', steps=800)")]
    assert clock_settings('run_preset("mini", steps=800, minutes=None)') == []
    found = {path.name: clock_settings(path.read_text(encoding="utf-8"))
             for path in sorted(LESSONS_DIR.glob("*.py"))}
    assert not {name: lines for name, lines in found.items() if lines}


def test_the_timing_bench_times_every_lesson(monkeypatch):
    """bench/lessons.py, whose table docs/performance.md gives, times the lessons this file runs, lettered ones
    (05a) and lesson 22 included (its first version's pattern skipped 05a, 05b and 06a), and --only picks
    lessons by their number with its letter."""
    monkeypatch.syspath_prepend(str(LESSONS_DIR.parent / "bench"))  # for its `from cpu import`, as when run
    spec = importlib.util.spec_from_file_location("bench_lessons", LESSONS_DIR.parent / "bench" / "lessons.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.lesson_scripts(set()) == LESSONS
    assert [path.name[:3] for path in bench.lesson_scripts({"05b", "22"})] == ["05b", "22_"]
