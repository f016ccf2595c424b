"""Nothing in the package can run code from a file it reads: no pickle (or its relatives), no eval/exec, no
`allow_pickle=True`.

The check reads the syntax tree of every module, not its text, so it sees imports and calls exactly:
prose that mentions pickle, a docstring explaining why it is refused, and `allow_pickle=False` are fine.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minibert"

# Modules whose loading functions execute code named by the data (pickle and the libraries built on it).
UNSAFE_MODULES = {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve", "marshal",
                  "torch", "yaml"}
UNSAFE_BUILTINS = {"eval", "exec", "__import__"}


def unsafe_uses(source, filename="<source>"):
    """Each unsafe construct in `source` as 'file:line: what', from its syntax tree."""
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            problems += [f"{where}: import {alias.name}" for alias in node.names
                         if alias.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in UNSAFE_MODULES:
            problems.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id in UNSAFE_BUILTINS:
                problems.append(f"{where}: {function.id}(...)")
            if isinstance(function, ast.Attribute) and function.attr in {"load", "loads", "Unpickler"} and \
                    isinstance(function.value, ast.Name) and function.value.id in UNSAFE_MODULES:
                problems.append(f"{where}: {function.value.id}.{function.attr}(...)")
            for keyword in node.keywords:
                if keyword.arg == "allow_pickle" and not (
                        isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                    problems.append(f"{where}: allow_pickle={ast.unparse(keyword.value)}")
    return problems


def package_modules():
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_modules_to_check():
    """The scan sees the whole package (the io readers among them), so an empty result means something."""
    names = {path.relative_to(PACKAGE).as_posix() for path in package_modules()}
    assert {"io/npz.py", "io/safetensors.py", "tokenizer/vocab.py"} <= names


@pytest.mark.parametrize("path", package_modules(), ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_module_loads_nothing_unsafely(path):
    """No pickle-family import, pickle.load, eval/exec, or allow_pickle other than False in this module."""
    assert unsafe_uses(path.read_text(encoding="utf-8"), str(path)) == []


@pytest.mark.parametrize("snippet", [
    "import pickle",
    "import os, _pickle as fast",
    "from pickle import loads",
    "from torch import load",
    "import yaml.loader",
    "data = pickle.load(file)",
    "eval(text)",
    "exec(compile(text, 'x', 'exec'))",
    "np.load(path, allow_pickle=True)",
    "np.load(path, allow_pickle=flag)",
    "module = __import__(name)",
])
def test_the_scan_catches_each_unsafe_form(snippet):
    """Each forbidden construct, written as code, is reported (so the module test above can fail)."""
    assert unsafe_uses(snippet)


@pytest.mark.parametrize("snippet", [
    '"""Unpickling runs whatever code the file names; pickle.load is never called."""',
    "# np.load(path, allow_pickle=True) would be unsafe",
    "np.load(path, allow_pickle=False)",
    "model.eval()",
    "json.loads(text)",
    "np.load(path)",
    "evaluate(model)",
])
def test_the_scan_allows_prose_and_safe_calls(snippet):
    """Mentions in docstrings and comments, `model.eval()`, json and np.load without pickle are fine."""
    assert unsafe_uses(snippet) == []
