"""Each experiment run names the code that made it (minibert/experiments/code_version.py)."""

import re
import subprocess

import numpy as np

from minibert.experiments import code_version as versions


def test_the_version_names_the_commit_and_the_packages_the_numbers_depend_on():
    found = versions.code_version()
    assert found["numpy"] == np.__version__
    assert re.fullmatch(r"[0-9a-f]{40}(\+changes)?|not a git checkout", found["minibert"])


def test_a_changed_tracked_file_is_said_and_a_folder_outside_git_is_named(tmp_path):
    assert versions._commit(tmp_path) == "not a git checkout"
    package = tmp_path / "minibert"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n", encoding="utf-8")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"]):
        subprocess.run(["git", "-C", str(tmp_path), *command], check=True, capture_output=True)
    commit = versions._commit(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    (package / "a.py").write_text("x = 2\n", encoding="utf-8")
    assert versions._commit(tmp_path) == commit + "+changes"
