"""The exercise checks are referees: each one must fail every plausible wrong answer in `exercise_mutants.py`.

A mutant is the reference body of one exercise with a student's mistake edited in. It is installed in this
process by giving the live function the mutant's compiled code (so every reference to the function, in
minibert and in the checks, runs the mistake), then the exercise's check file runs in-process under pytest,
as `python -m minibert.exercises check NN` would run it: NumPy backend, the checks' own fixtures. The check
named in the catalogue must fail, with an assertion or a gradcheck report, not with a crash. A subprocess
per mutant would cost a Python start-up and a Numba import each; this costs a pytest session.
"""

import ast
import contextlib
import importlib

import pytest
from exercise_mutants import MUTANTS

from minibert.errors import GradcheckError
from minibert.exercises import catalog, workspace
from minibert.exercises.markers import fill_source
from minibert.kernels.dispatch import use_backend

MARKED = workspace.scan_package()
# What a referee may fail with: its assertions, gradcheck's report, or pytest's "DID NOT RAISE".
REFEREE_FAILURES = (AssertionError, GradcheckError, pytest.fail.Exception)


def test_catalogue_covers_every_exercise():
    """At least three mutants per exercise, each with a distinct name, for every exercise in the catalog; the
    README counts them right."""
    listed = {exercise_id for lesson in catalog.LESSONS for exercise_id in lesson.ids}
    counts = {exercise_id: 0 for exercise_id in listed}
    for mutant in MUTANTS:
        counts[mutant.exercise] += 1
    assert min(counts.values()) >= 3, {k: v for k, v in counts.items() if v < 3}
    assert len({(m.exercise, m.name) for m in MUTANTS}) == len(MUTANTS)
    readme = " ".join((workspace.PACKAGE_DIR.parent / "README.md").read_text(encoding="utf-8").split())
    assert f"each of the {len(listed)} exercises' checks must fail every one of {len(MUTANTS)} plausible" in readme


def mutated_body(mutant):
    """The reference body of the mutant's exercise with its edits applied; each edit must match once."""
    body = "".join(MARKED[mutant.exercise].body)
    for old, new in mutant.edits:
        assert body.count(old) == 1, f"{mutant.exercise}/{mutant.name}: {old!r} occurs {body.count(old)} times"
        body = body.replace(old, new)
    return body.splitlines(keepends=True)


def enclosing_function(exercise, tree):
    """(dotted path from the module, def node) of the module-level function or method holding the markers."""
    line = exercise.begin + 1
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, ast.FunctionDef) and member.lineno <= line <= member.end_lineno:
                return ([node.name] if node is not member else []) + [member.name], member
    raise LookupError(f"exercise {exercise.id} is not inside a function of {exercise.path}")


def find_code(code, name, first_line):
    """The code object of function `name` defined at `first_line`, among the constants of a compiled module."""
    for constant in code.co_consts:
        if hasattr(constant, "co_consts"):
            if constant.co_name == name and constant.co_firstlineno == first_line:
                return constant
            found = find_code(constant, name, first_line)
            if found is not None:
                return found
    return None


@contextlib.contextmanager
def installed(mutant):
    """Run the mutant's body in place of the reference one inside the block."""
    exercise = MARKED[mutant.exercise]
    path = workspace.PACKAGE_DIR.parent / exercise.path
    source = path.read_text(encoding="utf-8")
    names, node = enclosing_function(exercise, ast.parse(source))
    module = importlib.import_module(exercise.path.removesuffix(".py").replace("/", "."))
    function = module
    for name in names:
        function = vars(function)[name]
    function = getattr(function, "__func__", function)  # a classmethod's code lives on its function
    mutated = compile(fill_source(source, exercise.path, {exercise.id: mutated_body(mutant)}), str(path), "exec")
    code = find_code(mutated, node.name, function.__code__.co_firstlineno)
    assert code is not None and code.co_freevars == function.__code__.co_freevars
    reference, function.__code__ = function.__code__, code
    try:
        yield
    finally:
        function.__code__ = reference


class Failures:
    """A pytest plugin that keeps each failed test's name and exception."""

    def __init__(self):
        self.by_test = {}

    def pytest_exception_interact(self, node, call, report):
        self.by_test.setdefault(node.originalname, call.excinfo)


def run_checks(path):
    """Run the check files at `path` in this process on the NumPy backend, as a workspace does; the failures.

    `-n 0`: in this process, where the mutant is installed, not in the worker processes the project's
    addopts would start. `no:unraisableexception`: that plugin ends each session with a full garbage collection
    of this process (the whole outer test session's objects, about half a second a mutant) only to turn what
    it finds into warnings, which fail no check."""
    failures = Failures()
    with use_backend("numpy"):
        status = pytest.main([str(path), "-q", "--tb=no", "-p", "no:cacheprovider", "-p", "no:unraisableexception",
                              "-n", "0"], plugins=[failures])
    assert status in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), f"the checks did not run: {status}"
    return failures.by_test


def test_reference_passes_every_check_in_process():
    """Run this way, with no mutant installed, every check passes: a mutant's failure is the mutant's doing."""
    assert run_checks(workspace.CHECKS_DIR) == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: f"{m.exercise}-{m.name}")
def test_check_fails_the_mutant(mutant):
    """The mutant makes its exercise's check fail, in the test the catalogue names, with a referee's message."""
    with installed(mutant):
        failures = run_checks(workspace.CHECKS_DIR / f"test_{mutant.exercise}.py")
    assert mutant.caught_by in failures, (f"{mutant.exercise}: the wrong body '{mutant.name}' was not caught by "
                                          f"{mutant.caught_by}; failing: {sorted(failures) or 'nothing'}")
    excinfo = failures[mutant.caught_by]
    assert excinfo.errisinstance(REFEREE_FAILURES), f"crashed instead: {excinfo.exconly()[:300]}"
