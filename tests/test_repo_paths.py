"""Every file the package, the lessons, the benchmarks, the README and docs/ name exists in the repository.

A path is anything that looks like one from the repository root (`docs/design.md`, `minibert/kernels/gelu.py`,
`bench/kernel_speed.py`, `lessons/04_kernels.py`, `tests/test_kernels.py`, `data/synthetic/probe.jsonl`) or from
inside the package (`kernels/gelu.py`, `train/pretraining_loop.py`). Files the code builds on the user's machine
(corpora, shards, lesson pictures, runs) are not in a clone, so they are left out by name.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_FOLDERS = "kernels|autograd|nn|model|io|tokenizer|data|optim|train|finetune|viz|cli|exercises|fast"
# A path: a known top folder, then folders and a file name with an extension, not inside a longer word or path.
PATH = re.compile(rf"(?<![\w./-])((?:docs|minibert|bench|lessons|tests|data|{PACKAGE_FOLDERS})/[\w./-]*\.[a-z]+)\b")
# Built on the user's machine, not committed: corpora and their shards, lesson pictures, training runs,
# exercise workspaces.
BUILT = re.compile(r"^data/\w+/(corpus\.txt|versions\.json|build/)|^lessons/output/|^runs/|^exercises/\d")
PLACEHOLDERS = ("NAME", "NN_", "DIR")  # `bench/NAME.py`, `lessons/NN_topic.py`: how to name a file, not a file


def named_files():
    """(where, path) for every repository path named in the text the students and users read."""
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("minibert", "lessons", "bench"):
        texts += sorted((ROOT / folder).rglob("*.py")) + sorted((ROOT / folder).rglob("*.md"))
    for text in texts:
        for number, line in enumerate(text.read_text(encoding="utf-8").splitlines(), 1):
            for match in PATH.finditer(line):
                yield f"{text.relative_to(ROOT)}:{number}", match.group(1)


def exists(path):
    return (ROOT / path).exists() or (ROOT / "minibert" / path).exists()


def test_the_path_pattern_finds_paths_and_only_paths():
    """The pattern picks out repository paths in prose and code, and not URLs or longer paths."""
    line = ("see docs/design.md and `kernels/gelu.py`, python bench/kernel_speed.py; not https://x.org/docs/a.md "
            "nor /usr/lib/minibert/x.py nor minibert/kernels")
    assert [m.group(1) for m in PATH.finditer(line)] == ["docs/design.md", "kernels/gelu.py", "bench/kernel_speed.py"]


def test_every_named_file_exists():
    missing = [f"{where}: {path}" for where, path in named_files()
               if not exists(path) and not BUILT.search(path) and not any(p in path for p in PLACEHOLDERS)]
    assert not missing, "files named but not in the repository:\n" + "\n".join(missing)


def test_nothing_names_a_file_outside_the_repository():
    """No reference to the shared folders this project was written from: the repository stands alone."""
    outside = re.compile(r"\.\./shared|/work/|\bmission\.md|seeds/")
    found = [where for where, _ in _lines_matching(outside)]
    assert not found, "names a file outside the repository: " + ", ".join(found)


def _lines_matching(pattern):
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("minibert", "lessons", "bench"):
        texts += sorted((ROOT / folder).rglob("*.py")) + sorted((ROOT / folder).rglob("*.md"))
    for text in texts:
        for number, line in enumerate(text.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                yield f"{text.relative_to(ROOT)}:{number}", line


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_git_ignores_nothing_under_docs():
    """Every file in docs/ is one a commit keeps: a folder copied there (a rerun's runs/) must not be dropped
    silently by an ignore pattern written for the working folders at the top."""
    files = [str(path.relative_to(ROOT)) for path in (ROOT / "docs").rglob("*") if path.is_file()]
    checked = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(files),
                             capture_output=True, text=True)
    assert checked.returncode in (0, 1), checked.stderr
    assert not checked.stdout, "ignored by git, so never committed:\n" + checked.stdout
