"""Every lesson script runs to completion in quick mode, in its own process, and saves the pictures it
announces as well-formed SVG.

Lessons are found by name (lessons/NN_*.py), so a lesson added later is tested without editing this file.
Each must finish in under 60 s on 2 cores (the course's promise); the timeout here leaves room for a busy
machine. Pictures go to a temporary folder (MINIBERT_LESSON_OUTPUT), not to lessons/output.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("script", LESSONS, ids=[path.stem for path in LESSONS])
def test_lesson_runs_in_quick_mode(script, tmp_path):
    """`python lessons/NN_topic.py` exits 0 from any working directory, prints something, and each picture it
    reports saving exists and parses as XML."""
    env = {**os.environ, "MINIBERT_LESSON_OUTPUT": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.strip()
    for saved in re.findall(r"picture saved: (\S+\.svg)", done.stdout):
        root = ET.parse(saved).getroot()
        assert root.tag.endswith("svg")


def test_lessons_are_numbered_without_gaps():
    """Lessons start at 01 and no number is skipped or used twice."""
    numbers = [int(path.name[:2]) for path in LESSONS]
    assert numbers == list(range(1, len(numbers) + 1))
