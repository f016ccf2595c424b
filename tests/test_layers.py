"""The architecture docs/design.md promises, checked on the source: the core imports nothing of speed, no
core signature or exercise carries a speed-only argument, the pretraining loop is one short function, and the
files docs/design.md lists for one attention layer exist and are at most seven."""

import ast
import re
from pathlib import Path

from minibert.exercises.catalog import LESSONS
from minibert.exercises.markers import find_exercises

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minibert"
CORE = [PACKAGE / "functional.py", *sorted((PACKAGE / "autograd").glob("*.py")),
        *sorted((PACKAGE / "nn").glob("*.py")), *sorted((PACKAGE / "model").glob("*.py"))]
SPEED_MODULES = ("numba", "minibert.fast", "threadpoolctl", "ctypes")
# What sharing the cores looks like in code: a thread count read or set, a pool, products cut in parts.
THREAD_CODE = re.compile(r"num_threads|ThreadPool|concurrent\.futures|\bthreading\b|share_matmuls|matmul_parts|"
                         r"run_together|\blaunch\(")
SPEED_WORDS = re.compile(r"\b(queries|prune\w*|pruning|last_layer_rows|fused\w*|fusion|accelerate\w*)\b")
SPEED_ARGUMENTS = re.compile(r"queries|rows|prune\w*|last_layer_rows|fused\w*|plain|fast")


def imported_modules(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_the_core_imports_nothing_of_speed():
    """autograd, functional, nn and model import neither numba, nor the speed layer, nor the process plan's
    tools (a file that did would fail here, naming itself and the import)."""
    found = [(path.relative_to(ROOT).as_posix(), module) for path in CORE for module in imported_modules(path)
             if module.startswith(SPEED_MODULES) or module == "minibert.fast"]
    assert found == []


def test_the_core_kernels_are_arithmetic():
    """minibert/kernels/ holds no thread count, no thread pool and no product cut in parts (the speed layer's
    fast/threads.py and fast/kernels/matmul.py do that), and imports nothing of the speed layer: its Numba
    kernels' prange loops run on Numba's own threads."""
    found = []
    for path in sorted((PACKAGE / "kernels").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        found += [f"{path.name}:{number}: {line.strip()}" for number, line in enumerate(lines, 1)
                  if THREAD_CODE.search(line)]
        found += [f"{path.name}: imports {module}" for module in imported_modules(path)
                  if module.startswith(("minibert.fast", "threadpoolctl", "ctypes"))]
    assert found == []


def test_no_core_signature_has_a_speed_only_argument():
    """No function or method of the core takes an argument that exists only for speed (queries, rows, a
    pruning or fusion switch)."""
    found = []
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [arg.arg for arg in node.args.args + node.args.kwonlyargs]
                found += [f"{path.name}:{node.name}({name})" for name in names if SPEED_ARGUMENTS.fullmatch(name)]
    assert found == []


def test_no_exercise_body_or_check_mentions_speed():
    """What a student writes, and the checks that referee it, carry no queries, pruning, rows or fusion."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for exercise in find_exercises(path.read_text(encoding="utf-8"), path.name):
            found += [f"{exercise.id}: {line.strip()}" for line in exercise.body if SPEED_WORDS.search(line)]
    ids = [exercise_id for lesson in LESSONS for exercise_id in lesson.ids]
    for exercise_id in ids:
        check = PACKAGE / "exercises" / "checks" / f"test_{exercise_id}.py"
        found += [f"{check.name}: {line.strip()}" for line in check.read_text(encoding="utf-8").splitlines()
                  if SPEED_WORDS.search(line)]
    assert found == []


def test_the_pretraining_loop_is_one_function_shorter_than_150_lines():
    """`pretrain`, the loop a student reads top to bottom, fits in 150 lines (docstring included)."""
    tree = ast.parse((PACKAGE / "train" / "pretraining_loop.py").read_text(encoding="utf-8"))
    loop = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "pretrain")
    assert loop.end_lineno - loop.lineno + 1 < 150
