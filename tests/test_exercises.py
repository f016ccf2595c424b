"""Tests for minibert.exercises: the markers, the catalog, and every lesson's generated workspace.

For each lesson with exercises a workspace is written to a temporary folder and its tests are run in a subprocess
against the workspace's own copy of minibert: they must fail while the bodies are stubs (and fail because of
the stubs), then pass once the reference bodies are put back.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minibert.exercises import catalog, workspace
from minibert.exercises.markers import MarkerError, fill_source, find_exercises, stub_source

SOURCE = '''def f(x):
    """Twice x."""
    # BEGIN EXERCISE double: add x to itself
    y = x + x
    return y
    # END EXERCISE


class A:
    def g(self):
        if True:
            # BEGIN EXERCISE inner: return 3
            return 3
            # END EXERCISE
'''


def test_stub_keeps_signature_docstring_and_markers():
    """Stubbing replaces only the lines between the markers, by one raise at the marker's indentation."""
    stubbed = stub_source(SOURCE, "m.py", {"double", "inner"})
    assert stubbed.splitlines()[:4] == ["def f(x):", '    """Twice x."""',
                                        "    # BEGIN EXERCISE double: add x to itself",
                                        "    raise NotImplementedError('exercise double: add x to itself')"]
    assert "            raise NotImplementedError('exercise inner: return 3')" in stubbed
    assert "y = x + x" not in stubbed and "            return 3\n" not in stubbed
    namespace = {}
    exec(compile(stubbed, "m.py", "exec"), namespace)  # noqa: S102 - the test compiles its own text
    with pytest.raises(NotImplementedError, match="add x to itself"):
        namespace["f"](2)


def test_stub_only_the_chosen_ids_and_fill_restores_the_source():
    """Ids not asked for stay as they are; fill_source with the reference bodies gives the original back."""
    stubbed = stub_source(SOURCE, "m.py", {"inner"})
    assert "y = x + x" in stubbed
    bodies = {exercise.id: exercise.body for exercise in find_exercises(SOURCE, "m.py")}
    assert fill_source(stub_source(SOURCE, "m.py", {"double", "inner"}), "m.py", bodies) == SOURCE


@pytest.mark.parametrize("broken, message", [
    ("    # BEGIN EXERCISE a: x\n    y = 1\n", "never closed"),
    ("    # END EXERCISE\n", "without a BEGIN"),
    ("    # BEGIN EXERCISE a: x\n    # BEGIN EXERCISE b: y\n", "inside exercise"),
    ("    # BEGIN EXERCISE a: x\n    y = 1\n  # END EXERCISE\n", "indented unlike"),
    ("    # BEGIN EXERCISE a: x\n    # only a comment\n    # END EXERCISE\n", "no code"),
    ("    # begin exercise a x\n", "malformed"),
])
def test_malformed_markers_are_refused(broken, message):
    """Unclosed, unopened, nested, misaligned, empty and misspelt markers raise MarkerError with a reason."""
    with pytest.raises(MarkerError, match=message):
        find_exercises("def f():\n" + broken, "m.py")


def test_catalog_and_markers_agree():
    """Every exercise the catalog lists is marked exactly once in the package and has a test file, every
    marked exercise is in the catalog, and lessons 01-12 have at least one exercise each."""
    marked = workspace.scan_package()
    listed = [exercise_id for lesson in catalog.LESSONS for exercise_id in lesson.ids]
    assert len(listed) == len(set(listed))
    assert sorted(marked) == sorted(listed)
    for exercise_id in listed:
        assert (workspace.CHECKS_DIR / f"test_{exercise_id}.py").is_file(), exercise_id
    assert all(catalog.lesson(n).exercises for n in [*range(1, 13), "5a", "5b", "6a"])
    numbered = [lesson.number for lesson in catalog.LESSONS if lesson.number.isdigit()]
    assert numbered == [f"{n:02d}" for n in range(1, len(numbered) + 1)]
    numbers = [lesson.number for lesson in catalog.LESSONS]
    assert numbers == sorted(numbers)  # a lettered lesson (05a) sits right after its number


def test_every_lesson_script_exists():
    """The catalog names the lesson scripts that are in lessons/ (lessons not yet written are skipped by
    name, so a renamed script is caught)."""
    lessons_dir = Path(__file__).resolve().parent.parent / "lessons"
    present = {path.name for path in lessons_dir.glob("[0-9][0-9]*_*.py")}
    listed = {lesson.script for lesson in catalog.LESSONS}
    assert present <= listed, f"scripts not in the catalog: {sorted(present - listed)}"
    assert listed <= present, f"catalogued scripts missing: {sorted(listed - present)}"


def test_start_refuses_to_overwrite_and_reset_keeps_a_backup(tmp_path):
    """start into a non-empty folder fails; reset moves the old workspace to <dir>.old; a folder that is not
    a workspace is never deleted."""
    target = tmp_path / "ws"
    workspace.start("02", target)
    (target / "notes.txt").write_text("my work")
    with pytest.raises(FileExistsError, match="reset"):
        workspace.start("02", target)
    workspace.reset("02", target)
    assert (tmp_path / "ws.old" / "notes.txt").read_text() == "my work"
    assert not (target / "notes.txt").exists()
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not an exercise workspace"):
        workspace.start("02", stranger, overwrite=True)
    assert (stranger / "keep.txt").exists()


def test_a_second_reset_never_replaces_the_first_backup(tmp_path, capsys):
    """`reset 02` twice: the second reset replaced ws.old, and the work saved there was lost. Now each reset
    takes the next free name (ws.old, ws.2.old, ...) and says where the work went."""
    from minibert.exercises.__main__ import main as exercises_main

    target = tmp_path / "ws"
    workspace.start("02", target)
    (target / "notes.txt").write_text("first attempt")
    assert exercises_main(["reset", "02", "--dir", str(target)]) == 0
    assert f"your previous files are in {tmp_path / 'ws.old'}" in capsys.readouterr().out
    (target / "notes.txt").write_text("second attempt")
    _, backup = workspace.reset("02", target)
    assert backup == tmp_path / "ws.2.old"
    assert (tmp_path / "ws.old" / "notes.txt").read_text() == "first attempt"
    assert (tmp_path / "ws.2.old" / "notes.txt").read_text() == "second attempt"


def test_check_of_a_workspace_with_deleted_files_hints_at_reset(tmp_path, capsys):
    """A workspace whose tests (or minibert copy) were deleted said only "no tests ran"; now one line names
    what is missing and how to start over."""
    from minibert.exercises.__main__ import main as exercises_main

    target = tmp_path / "ws"
    workspace.start("02", target)
    for test_file in (target / "tests").glob("test_*.py"):
        test_file.unlink()
    assert exercises_main(["check", "02", "--dir", str(target)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "is missing tests/test_" in error[0]
    assert f"python -m minibert.exercises reset 02 --dir {target}" in error[0]


def test_lessons_without_exercises_say_so():
    """start 13 explains that lesson 13 has none, and names the lessons that have."""
    with pytest.raises(ValueError, match="has no exercises; lessons 01, 02, .*, 12 do"):
        workspace.start("13", "unused")


@pytest.mark.parametrize("number", [lesson.number for lesson in catalog.LESSONS if lesson.exercises])
def test_workspace_fails_unsolved_and_passes_solved(tmp_path, number):
    """The generated workspace imports and its tests FAIL, every exercise because of its NotImplementedError
    stub; with the reference bodies put back, every test PASSES."""
    directory = workspace.start(number, tmp_path / number)
    ids = catalog.lesson(number).ids
    for path in {entry.path for entry in workspace.lesson_exercises(number)[1]}:
        assert re.search(r"raise NotImplementedError\(['\"]exercise ", (directory / path).read_text())

    status, results = workspace.check(number, directory, capture=True)
    assert status == 1, results.get("_output")
    for exercise_id in ids:
        assert results[exercise_id]["failed"] > 0, (exercise_id, results["_output"])
        assert "NotImplementedError" in results[exercise_id]["why"]

    workspace.restore_reference(directory)
    status, results = workspace.check(number, directory, capture=True)
    assert status == 0, results.get("_output")
    for exercise_id in ids:
        assert results[exercise_id] == {"passed": results[exercise_id]["passed"], "failed": 0, "why": None}
        assert results[exercise_id]["passed"] > 0


def test_command_line_list_and_start(tmp_path):
    """`python -m minibert.exercises list` names every exercise; `start` prints the workspace README."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    listing = subprocess.run([sys.executable, "-m", "minibert.exercises", "list"], capture_output=True,
                             text=True, check=True, cwd=tmp_path, env=env).stdout
    assert re.search(r"^05 ", listing, re.M) and "attention_forward" in listing
    assert "NOT MARKED" not in listing
    started = subprocess.run([sys.executable, "-m", "minibert.exercises", "start", "7"], capture_output=True,
                             text=True, check=True, cwd=tmp_path, env=env).stdout
    assert "wordpiece_longest_match" in started and (tmp_path / "exercises" / "07" / "tests").is_dir()
