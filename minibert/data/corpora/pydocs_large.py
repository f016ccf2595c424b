"""The `pydocs-large` corpus: pydocs plus the docstrings of sympy, mpmath, scipy, pandas and matplotlib.

pydocs (about 2.8 MB) is read through many times by the longer pretraining runs; they need more text, still
real English and still with nothing to download but packages. These five libraries write most of their
reference manuals in docstrings: 5.7 MB more. minibert does not depend on them, so the build installs
them with pip, at pinned versions, into the corpus folder (`<out_dir>/packages`, never into your
environment), then reads them with pydocs' own code. pip needs the package index once; pydocs needs none.
"""

# Why a child Python reads the docstrings: importing pandas and matplotlib, and every submodule of them,
# changes the process that does it: matplotlib chooses a backend and writes a font cache, pandas registers
# converters, and a thousand modules stay loaded. So `build_pydocs` runs in a child Python whose `sys.path`
# starts with the packages folder; it writes corpus.txt and versions.json and exits, and the caller's process
# is as it was. MPLBACKEND=Agg keeps matplotlib from ever opening a window, and a temporary MPLCONFIGDIR keeps
# its font cache out of your home folder. PYTHONHASHSEED=0 makes the child's text the same on every build:
# some docstrings are written at import time from a set (scipy.stats names a function's keyword-only
# arguments that way), and a set of strings is listed in an order that changes with each process's hash seed.

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from minibert.data.corpora.corpus_file import CORPUS_FILE, package_versions
from minibert.data.corpora.pydocs import PACKAGE_MODULES, build_pydocs
from minibert.errors import DataError

NAME = "pydocs-large"
PACKAGES_DIR = "packages"  # inside the corpus folder

# Pinned, because their docstrings are the corpus: another version is another corpus. Each is the newest
# release with wheels for every Python minibert supports (3.10 to 3.12) that works with numpy 2.x: scipy 1.16,
# pandas 3 and matplotlib 3.11 need Python 3.11, and sympy 1.14 needs mpmath below 1.4.
PACKAGE_PINS = {"sympy": "1.14.0", "mpmath": "1.3.0", "scipy": "1.15.3", "pandas": "2.3.3", "matplotlib": "3.10.9"}
# What they import that a minibert environment lacks (numpy it has): pandas imports python-dateutil (which
# imports six) and pytz; matplotlib imports python-dateutil, cycler, kiwisolver, pyparsing, pillow and
# packaging, and its PDF and PostScript backends fonttools. Their other requirements, contourpy and tzdata,
# are used only when a function runs, and no module fails to import without them. pip runs with --no-deps so
# that it never installs a second numpy beside the one the pydocs part is read from.
DEPENDENCY_PINS = {"python-dateutil": "3.0.0", "six": "1.17.0", "pytz": "2026.6", "cycler": "0.12.1",
                   "kiwisolver": "1.5.1", "pyparsing": "3.3.3", "pillow": "12.3.0", "packaging": "26.4",
                   "fonttools": "4.65.0"}
# pydocs' packages and these, each walked whole. The dependencies are not read: they only make imports work.
LARGE_PACKAGE_MODULES = {**PACKAGE_MODULES, **{name: (name, f"{name}.*") for name in PACKAGE_PINS}}

# The child's whole program: run `build_in_this_process` with the request the parent gives as an argument.
_CHILD = "import sys; from minibert.data.corpora.pydocs_large import build_in_this_process as b; b(sys.argv[1])"
_MINIBERT_ROOT = Path(__file__).resolve().parents[3]  # so the child imports this minibert, installed or not


def pip_requirements():
    """The pinned packages and dependencies as pip's `name==version` arguments."""
    return [f"{name}=={version}" for name, version in {**PACKAGE_PINS, **DEPENDENCY_PINS}.items()]


def missing_pins(folder):
    """The `name==version` requirements not installed in `folder` (a folder pip installed into with --target)."""
    installed = installed_versions(folder)
    return [requirement for requirement in pip_requirements()
            if installed.get(requirement.split("==")[0]) != requirement.split("==")[1]]


def installed_versions(folder):
    """{lower-case name: version} of the distributions recorded in `folder`'s `*.dist-info` folders.

    A record that names nothing (its METADATA missing, not UTF-8, or without a Name; a file where pip
    writes a folder) is passed over: a pinned package whose record is damaged so counts as missing, and
    the build installs the pins again, which repairs it.
    """
    versions = {}
    for distribution in metadata.distributions(path=[str(folder)]):
        try:
            name = distribution.metadata["Name"]
        except UnicodeDecodeError:
            continue
        if name:
            versions[name.lower()] = distribution.version
    return versions


def install_packages(folder, progress=print):
    """Install the pinned packages into `folder` with pip, replacing what is there; DataError if pip cannot.

    pip writes into a folder of its own, renamed to `folder` when it is complete, so an interrupted install
    never looks finished. Wheels only: building scipy from source needs compilers and most of an hour.
    """
    folder = Path(folder)
    partial = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    options = ["--no-deps", "--only-binary=:all:", "--no-input", "--disable-pip-version-check"]
    command = [sys.executable, "-m", "pip", "install", "--target", str(partial), *options, *pip_requirements()]
    progress(f"{NAME}: installing {', '.join(pip_requirements())} into {folder} (pip, under a minute)")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise DataError(f"{NAME}: pip could not install its packages into {folder} ({_last_line(result.stderr)}); "
                        "this corpus needs the package index once: run the build again where pip can reach it, "
                        "or use --corpus pydocs, which needs no network")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)


def _last_line(text):
    """The last non-empty line of a program's output: where pip and Python put the error."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def build_pydocs_large(out_dir, progress=print, modules=None, include_topics=True, install=install_packages):
    """Build the pydocs-large corpus in `out_dir` (corpus.txt, versions.json); return the corpus path.

    The pinned packages are installed into `out_dir/packages` unless they are there already. `modules` and
    `include_topics` restrict the build as in `build_pydocs` (for tests); `install(folder, progress)` puts the
    packages into `folder` (tests give one that writes a small package instead of calling pip).
    """
    out_dir = Path(out_dir).resolve()  # the child may resolve a relative path elsewhere
    packages = out_dir / PACKAGES_DIR
    if missing_pins(packages):
        install(packages, progress)
    request = json.dumps({"out_dir": str(out_dir), "modules": modules, "include_topics": include_topics})
    search_path = [str(packages), str(_MINIBERT_ROOT), os.environ.get("PYTHONPATH", "")]
    with tempfile.TemporaryDirectory(prefix="minibert-matplotlib-") as config_dir:
        environment = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": config_dir, "PYTHONHASHSEED": "0",
                       "PYTHONPATH": os.pathsep.join(part for part in search_path if part)}
        # The child's errors go to the same pipe as its progress lines, so neither pipe can fill up unread.
        with subprocess.Popen([sys.executable, "-c", _CHILD, request], env=environment, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as child:
            lines = []
            for line in child.stdout:
                lines.append(line)
                progress(line.rstrip())
    if child.returncode != 0:
        raise DataError(f"{NAME}: reading the docstrings failed in a child Python (exit {child.returncode}: "
                        f"{_last_line(''.join(lines[-20:]))}); the output above says where")
    return out_dir / CORPUS_FILE


def build_in_this_process(request):
    """The child's part: pydocs' build over the standard library and LARGE_PACKAGE_MODULES, with the
    dependencies' versions recorded too. `request` is the parent's JSON (out_dir, modules, include_topics)."""
    request = json.loads(request)
    build_pydocs(request["out_dir"], progress=lambda message: print(message, flush=True),
                 modules=request["modules"], include_topics=request["include_topics"],
                 packages=LARGE_PACKAGE_MODULES, name=NAME,
                 details={"dependencies": package_versions(DEPENDENCY_PINS)})
