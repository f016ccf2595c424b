"""Tests for minibert.data.corpora.pydocs_large: the packages folder, the child Python, pip's failures.

No test calls pip or reads the real packages: a small package written into the packages folder stands in
for them, so the suite needs no network.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from minibert.data.corpora import build_corpus, iter_documents, pydocs_large
from minibert.errors import DataError, TokenizerError
from minibert.tokenizer import load_vocab
from minibert.tokenizer.trainer import count_words


def quiet(*args, **kwargs):
    pass


def write_small_package(folder, progress):
    """An installer for the tests: a package `minibert_fake_docs` with a subpackage and a test suite."""
    package = folder / "minibert_fake_docs"
    (package / "tests").mkdir(parents=True)
    # The package's docstring says which matplotlib backend its importer ran with.
    (package / "__init__.py").write_text(
        'import os\n__doc__ = ("The fake package documents nothing of use. "\n'
        '           "The matplotlib backend here is " + os.environ.get("MPLBACKEND", "unset") + ".")\n')
    (package / "geometry.py").write_text(
        '"""The geometry module measures imaginary shapes.\n\nEach shape has an area and a perimeter."""\n')
    (package / "tests" / "__init__.py").write_text(
        '"""This test suite must never be read.\n\nIts sentences are not documentation."""\n')


def test_build_reads_the_packages_folder_in_a_child_python(tmp_path):
    """The packages folder's modules are read (not their tests), beside pydocs' own modules, by a child
    Python running with matplotlib's Agg backend; the caller never imports them."""
    path = build_corpus("pydocs-large", tmp_path, progress=quiet, install=write_small_package,
                        modules=["minibert_fake_docs", "minibert_fake_docs.*", "json"], include_topics=False)
    sentences = {sentence for _, document in iter_documents(path) for sentence in document}
    assert {"The fake package documents nothing of use.", "The matplotlib backend here is Agg.",
            "The geometry module measures imaginary shapes."} <= sentences
    assert "Serialize obj to a JSON formatted str." in sentences  # the pydocs part
    assert "This test suite must never be read." not in sentences
    assert "minibert_fake_docs" not in sys.modules
    versions = json.loads((tmp_path / "versions.json").read_text())
    assert versions["corpus"] == "pydocs-large"
    assert set(versions["packages"]) == set(pydocs_large.LARGE_PACKAGE_MODULES)
    assert set(versions["dependencies"]) == set(pydocs_large.DEPENDENCY_PINS)


def write_set_docs(folder, progress):
    """An installer for the tests: a module whose docstring is written at import time from a set of names,
    as scipy.stats writes some of its own."""
    folder.mkdir(parents=True)
    (folder / "minibert_set_docs.py").write_text(
        'names = {"axis", "method", "keepdims", "alternative", "nan_policy", "equal_var", "trim", "weights"}\n'
        '__doc__ = ("Use of argument(s) " + str(names) + " by position is deprecated; beginning in version 2, "\n'
        '           "these will be keyword-only. "\n'
        '           "Pass them by name, as the examples below do.")\n')


def test_a_build_gives_the_same_text_whatever_the_callers_hash_seed(tmp_path, monkeypatch):
    """A docstring listed from a set comes out in one order on every build: the corpus is named by its
    sha256 (versions.json), and a checkpoint pretrained on it must be one that can be pretrained again."""
    built = []
    for seed in ("1", "2", "3"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        path = build_corpus("pydocs-large", tmp_path / seed, progress=quiet, install=write_set_docs,
                            modules=["minibert_set_docs"], include_topics=False)
        built.append(path.read_bytes())
    assert b"keyword-only" in built[0]
    assert built[1] == built[0] and built[2] == built[0]


def test_pip_failure_is_a_one_line_error_and_leaves_no_packages_folder(tmp_path, monkeypatch):
    """Without the package index, pip fails: the error names pip's reason and the corpus that needs no
    network, in one line, and no half-installed folder is left to be taken for a complete one."""
    commands = []

    def failing_pip(command, **kwargs):
        commands.append(command)
        target = command[command.index("--target") + 1]
        Path(target).mkdir(parents=True)  # pip had begun writing
        return subprocess.CompletedProcess(command, 1, "", "WARNING: Retrying after connection broken\n"
                                           "ERROR: No matching distribution found for sympy==1.14.0\n")

    monkeypatch.setattr(pydocs_large.subprocess, "run", failing_pip)
    with pytest.raises(DataError) as raised:
        pydocs_large.build_pydocs_large(tmp_path, progress=quiet)
    message = str(raised.value)
    assert "\n" not in message
    assert "No matching distribution found for sympy==1.14.0" in message and "--corpus pydocs" in message
    command = commands[0]
    assert "--no-deps" in command and "sympy==1.14.0" in command and "python-dateutil==3.0.0" in command
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def write_distribution(folder, name, version):
    """The record pip writes for an installed distribution, which `importlib.metadata` reads."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_missing_pins_compares_names_and_versions(tmp_path):
    """A pinned package is missing when absent or at another version; names match whatever their case
    (pillow's metadata has said `Pillow`)."""
    assert pydocs_large.missing_pins(tmp_path / "absent") == pydocs_large.pip_requirements()
    for name, version in {**pydocs_large.PACKAGE_PINS, **pydocs_large.DEPENDENCY_PINS}.items():
        if name == "pillow":
            name = "Pillow"
        write_distribution(tmp_path, name, "1.14.0" if name == "scipy" else version)
    assert pydocs_large.missing_pins(tmp_path) == [f"scipy=={pydocs_large.PACKAGE_PINS['scipy']}"]


def test_damaged_or_foreign_records_in_the_packages_folder_are_passed_over(tmp_path):
    """A dist-info folder without METADATA, one whose METADATA is not UTF-8 or names nothing, and a file
    named like a record are passed over, not a traceback; a pinned package whose record is damaged counts
    as missing, so the build installs the pins again and repairs it. The damaged entries stay as they were."""
    pins = {**pydocs_large.PACKAGE_PINS, **pydocs_large.DEPENDENCY_PINS}
    for name, version in pins.items():
        write_distribution(tmp_path, name, version)
    (tmp_path / "empty-1.0.dist-info").mkdir()
    (tmp_path / "latin-1.0.dist-info").mkdir()
    (tmp_path / "latin-1.0.dist-info" / "METADATA").write_bytes(b"Name: caf\xe9\nVersion: 1.0\n")
    (tmp_path / "nameless-1.0.dist-info").mkdir()
    (tmp_path / "nameless-1.0.dist-info" / "METADATA").write_text("Version: 1.0\n")
    (tmp_path / "stray-1.0.dist-info").write_bytes(b"not a folder")
    assert pydocs_large.missing_pins(tmp_path) == []
    damaged = tmp_path / f"six-{pins['six']}.dist-info" / "METADATA"
    damaged.unlink()
    assert pydocs_large.missing_pins(tmp_path) == [f"six=={pins['six']}"]
    assert (tmp_path / "stray-1.0.dist-info").read_bytes() == b"not a folder"


def test_messages_show_a_path_as_the_path(tmp_path):
    """An error about a file the corpus build reads names it as the user would type it, never as
    `PosixPath('…')`: a corpus file that is not there, a vocabulary that is not there, a corpus that is
    not UTF-8, each handed over as a Path."""
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 .\n")
    for read, path in [(lambda path: build_corpus(path, tmp_path), tmp_path / "absent.txt"),
                       (load_vocab, tmp_path / "vocab.txt"), (count_words, latin)]:
        with pytest.raises((DataError, TokenizerError)) as raised:
            read(path)
        assert str(path) in str(raised.value) and "PosixPath" not in str(raised.value)
