"""A student's workspace: a copy of minibert whose exercise bodies are stubs, plus the tests that judge them.

    exercises/05/
        minibert/          the whole package, copied; lesson 05's marked bodies raise NotImplementedError
        tests/             test_<id>.py for each of the lesson's exercises (from minibert/exercises/checks)
        conftest.py        puts this copy of minibert first on the import path, reports per exercise
        pytest.ini         makes this folder pytest's root, whatever the project around it
        README.md          what to write, where, and how to check it
        .exercise.json     which lesson and exercises this is (read by `check` and the conftest)
"""

# Only the chosen lesson's bodies are stubbed; the rest of the package is the reference, so an exercise is
# tested in the real model around it.

import json
import shutil
import subprocess
import sys
from pathlib import Path

from minibert.exercises import capstone, catalog
from minibert.exercises.markers import MarkerError, fill_source, find_exercises, stub_source
from minibert.io.overwrite import free_name
from minibert.surrogates import shown

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the reference minibert/ that stubs are cut from
CHECKS_DIR = Path(__file__).resolve().parent / "checks"
CONFTEST_TEMPLATE = Path(__file__).resolve().parent / "workspace_conftest.py"
CAPSTONE_TEST = Path(__file__).resolve().parent / "capstone_test.py"
# HuggingFace's outputs on a fixed batch, stored in the repository (tests/fixtures/golden/README.md): the
# capstone's end-to-end reference.
GOLDEN_DIR = PACKAGE_DIR.parent / "tests" / "fixtures" / "golden"
METADATA = ".exercise.json"
RESULTS = ".results.json"
PYTEST_INI = "[pytest]\naddopts = -q --tb=short\ntestpaths = tests\n"
GITIGNORE = ("# A student workspace, made by `python -m minibert.exercises start`.\n"
             "# Delete this file to keep your work under version control.\n*\n")
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")


def scan_package(package_dir=PACKAGE_DIR):
    """Every exercise marked in the package: id -> Exercise (its path relative to the package's parent)."""
    package_dir = Path(package_dir)
    exercises = {}
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(package_dir.parent).as_posix()
        for exercise in find_exercises(path.read_text(encoding="utf-8"), relative):
            if exercise.id in exercises:
                raise MarkerError(f"exercise id {exercise.id!r} is marked twice: in "
                                  f"{exercises[exercise.id].path} and {relative}")
            exercises[exercise.id] = exercise
    return exercises


def default_dir(number):
    return Path("exercises") / catalog.lesson(number).number


def lesson_exercises(number, package_dir=PACKAGE_DIR):
    """(Lesson, [Exercise, ...]) for lesson `number`, checking that every listed exercise is marked."""
    lesson = catalog.lesson(number)
    if not lesson.exercises:
        with_exercises = ", ".join(entry.number for entry in catalog.LESSONS if entry.exercises)
        raise ValueError(f"lesson {lesson.number} ({lesson.title}) has no exercises; lessons {with_exercises} "
                         "do (python -m minibert.exercises list)")
    marked = scan_package(package_dir)
    missing = [exercise_id for exercise_id in lesson.ids if exercise_id not in marked]
    if missing:
        raise MarkerError(f"lesson {lesson.number} lists exercises {missing} but no source file marks them")
    return lesson, [marked[exercise_id] for exercise_id in lesson.ids]


def start(number, directory=None, overwrite=False, package_dir=PACKAGE_DIR):
    """Write lesson `number`'s workspace to `directory` (default exercises/NN) and return its path."""
    lesson, exercises = lesson_exercises(number, package_dir)
    directory = Path(directory or default_dir(number))
    if directory.exists() and any(directory.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{directory} is not empty; continue your work there, or "
                                  f"start over with: python -m minibert.exercises reset {lesson.number}"
                                  f"{'' if directory == default_dir(number) else f' --dir {directory}'}")
        _remove_workspace(directory)
    golden = GOLDEN_DIR / capstone.GOLDEN_FOLDER
    if lesson is catalog.CAPSTONE and not golden.is_dir():
        raise FileNotFoundError(f"the capstone compares your BERT with HuggingFace's outputs stored in {golden}, "
                                "which is not there; run it from a checkout of the minibert repository")
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(package_dir, directory / "minibert", ignore=COPY_IGNORE)

    ids = set(lesson.ids)
    for path in sorted({exercise.path for exercise in exercises}):
        target = directory / path
        stubbed = stub_source(target.read_text(encoding="utf-8"), path, ids)
        compile(stubbed, str(target), "exec")  # a stub that breaks the syntax is the generator's bug
        target.write_text(stubbed, encoding="utf-8")

    (directory / "tests").mkdir()
    for exercise in exercises:
        shutil.copy(CHECKS_DIR / f"test_{exercise.id}.py", directory / "tests")
    if lesson is catalog.CAPSTONE:
        shutil.copy(CAPSTONE_TEST, directory / "tests" / "test_capstone.py")
        shutil.copytree(golden, directory / "tests" / "golden")
    shutil.copy(CONFTEST_TEMPLATE, directory / "conftest.py")
    (directory / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    (directory / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    metadata = {"lesson": lesson.number, "title": lesson.title,
                "exercises": [{"id": e.id, "path": e.path, "line": e.begin + 1, "hint": e.hint, "task": task}
                              for e, (_, task) in zip(exercises, lesson.exercises, strict=True)]}
    text = json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"
    (directory / METADATA).write_text(text, encoding="utf-8")
    (directory / "README.md").write_text(shown(_readme(lesson, metadata, directory)), encoding="utf-8")
    return directory


def reset(number, directory=None, package_dir=PACKAGE_DIR):
    """Start lesson `number` over. Returns (the new workspace, the backup of the old one or None).

    The old workspace is renamed `<dir>.old`, or `<dir>.2.old`, `<dir>.3.old`, ... when that exists: a
    backup holds a student's work, so a second reset never replaces the first one's."""
    directory = Path(directory or default_dir(number))
    backup = None
    if directory.exists():
        _check_is_workspace(directory)
        backup = free_name(directory.with_name(directory.name + ".old"))
        directory.rename(backup)
    return start(number, directory, package_dir=package_dir), backup


def restore_reference(directory, package_dir=PACKAGE_DIR):
    """Put the reference bodies back into a workspace: what a correct solution looks like (used by the tests
    that prove every workspace passes once solved)."""
    directory = Path(directory)
    metadata = _check_is_workspace(directory)
    marked = scan_package(package_dir)
    by_path = {}
    for entry in metadata["exercises"]:
        by_path.setdefault(entry["path"], {})[entry["id"]] = marked[entry["id"]].body
    for path, bodies in by_path.items():
        target = directory / path
        target.write_text(fill_source(target.read_text(encoding="utf-8"), path, bodies), encoding="utf-8")


def check(number, directory=None, capture=False, extra_args=()):
    """Run the workspace's tests against the workspace's minibert. Returns (pytest's exit code, results),
    where results maps each exercise id to {"passed": n, "failed": n, "why": first failure or None}."""
    directory = Path(directory or default_dir(number))
    if not directory.exists():
        raise FileNotFoundError(f"no workspace at {directory}; create it with: python -m minibert.exercises "
                                f"start {catalog.lesson(number).number}")
    metadata = _check_is_workspace(directory)
    if metadata["lesson"] != catalog.lesson(number).number:
        raise ValueError(f"{directory} is the workspace of lesson {metadata['lesson']}, not {number}")
    missing = [name for name in _workspace_files(metadata) if not (directory / name).exists()]
    if missing:
        raise FileNotFoundError(f"{directory} is missing {', '.join(missing)}, so its tests cannot run; start "
                                f"over with: python -m minibert.exercises reset {metadata['lesson']}"
                                f"{'' if directory == default_dir(number) else f' --dir {directory}'} "
                                "(your files are kept in a .old backup)")
    (directory / RESULTS).unlink(missing_ok=True)
    # One line per failure: the table the conftest prints after the run says which exercise and why;
    # `python -m pytest <dir>` shows the full tracebacks.
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tb=line", "-rN", *extra_args]
    done = subprocess.run(command, cwd=directory, capture_output=capture, text=True, check=False)
    results_file = directory / RESULTS
    results = json.loads(results_file.read_text(encoding="utf-8")) if results_file.exists() else {}
    if capture:
        results["_output"] = done.stdout + done.stderr
    return done.returncode, results


def _workspace_files(metadata):
    """The files `check` needs: the copy of minibert holding the student's code, the tests, pytest's setup."""
    paths = {entry["path"] for entry in metadata["exercises"]}
    tests = [f"tests/test_{entry['id']}.py" for entry in metadata["exercises"]]
    if metadata["lesson"] == catalog.CAPSTONE.number:
        tests.append(f"tests/test_{catalog.CAPSTONE.number}.py")
    return ["minibert", *sorted(paths), *tests, "conftest.py", "pytest.ini"]


def _check_is_workspace(directory):
    metadata_file = Path(directory) / METADATA
    if not metadata_file.is_file():
        raise FileExistsError(f"{directory} is not an exercise workspace (it has no {METADATA}); "
                              "refusing to touch it")
    return json.loads(metadata_file.read_text(encoding="utf-8"))


def _remove_workspace(directory):
    _check_is_workspace(directory)  # never delete a folder we did not write
    shutil.rmtree(directory)


def _readme(lesson, metadata, directory):
    lines = [f"# Exercises of lesson {lesson.number}: {lesson.title}", "",
             f"Read `lessons/{lesson.script}` first. Then, in this folder's copy of minibert, replace each "
             "`raise NotImplementedError(...)` between the `BEGIN EXERCISE` / `END EXERCISE` lines:", ""]
    for entry in metadata["exercises"]:
        lines += [f"- **{entry['id']}** — {entry['task']}.", f"  `{entry['path']}`, line {entry['line']}. "
                  f"Hint: {entry['hint']}."]
    lines += ["", "Check your work (from the folder you ran `start` in):", "",
              f"    python -m minibert.exercises check {lesson.number}"
              f"{'' if directory == default_dir(lesson.number) else f' --dir {directory}'}",
              f"    python -m pytest {directory.as_posix()}        # the same tests, pytest's own report", "",
              "Each test says in its docstring what it checks; the gradient checks (minibert.gradcheck) are "
              "the referee. Start over with `python -m minibert.exercises reset "
              f"{lesson.number}` (your current files are kept in `{directory.name}.old`, or "
              f"`{directory.name}.2.old`, ... if that exists).", ""]
    return "\n".join(lines)
