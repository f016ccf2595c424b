"""The README's two commands, timed as a new user meets them: each run in a fresh clone of this checkout's
commit, with a fresh virtual environment, no pip cache and no Numba cache, the whole command timed (the
install, the data and the kernels' compilation included).

    python bench/readme_commands.py --runs 3                  # both commands, 3 runs each, alternating
    python bench/readme_commands.py --runs 3 --only tests     # the test command alone
    python bench/readme_commands.py --dry-run                 # print the commands it would time, run nothing

It prints each run's wall time with the load average before and after it, and what the run ended with (the
pretraining's last held-out evaluation: its step, masked-LM and NSP accuracy; pytest's summary line), then
each command's median and range, and the pretraining's median accuracy and steps with their ranges: the
figures the README quotes are those medians (a figure of one run is a best or a worst day, not a typical
one). The commands are read from the README itself ("Two commands"), so what is timed is what a
reader runs. Each clone is removed after its run; a run that fails keeps its clone and log, and is left out of
the median.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.train.logs import LOG_FILE, read_log  # noqa: E402

NAMES = ("main", "tests")  # the README's first command, then its second


def readme_commands(readme=ROOT / "README.md"):
    """{"main": command, "tests": command}: the two command lines of the README's "Two commands" section
    that set up a virtual environment, in the order the README gives them."""
    text = readme.read_text(encoding="utf-8")
    start = text.index("\n## Two commands")
    section = text[start:text.index("\n## ", start + 1)]
    found = [line.strip() for line in section.splitlines() if re.match(r" {4}python3 -m venv ", line)]
    if len(found) != len(NAMES):
        raise SystemExit(f"the README's 'Two commands' section has {len(found)} set-up command lines, not "
                         f"{len(NAMES)}: {found}")
    return dict(zip(NAMES, found, strict=True))


def fresh_clone(commit, parent):
    """A clone of this repository at `commit` in a new folder under `parent`; returns its path."""
    folder = Path(tempfile.mkdtemp(prefix="minibert-readme-", dir=parent)) / "minibert"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", commit], check=True)
    return folder


def time_command(command, folder, pip_cache):
    """(seconds, exit status) of `command` run by bash in `folder`, its output in `folder`/../run.log."""
    environment = dict(os.environ)
    if not pip_cache:
        environment["PIP_NO_CACHE_DIR"] = "1"  # a new machine has downloaded nothing yet
    environment.pop("VIRTUAL_ENV", None)  # the command makes and uses its own .venv
    with open(folder.parent / "run.log", "wb") as log:
        started = time.perf_counter()
        status = subprocess.run(["bash", "-c", command], cwd=folder, env=environment, stdout=log,
                                stderr=subprocess.STDOUT).returncode
    return time.perf_counter() - started, status


def pretraining_result(folder):
    """The last held-out evaluation of the pretraining the main command made in `folder` (its log's last
    `eval` record), or None when there is not exactly one run folder with one."""
    logs = list((folder / "runs").glob(f"*/{LOG_FILE}"))
    evaluations = [record for record in read_log(logs[0]) if record["kind"] == "eval"] if len(logs) == 1 else []
    return evaluations[-1] if evaluations else None


def pytest_summary(folder):
    """pytest's last summary line ("2379 passed, 4 skipped in 1442.12s (0:24:02)") in the run's log."""
    text = (folder.parent / "run.log").read_text(encoding="utf-8", errors="replace")
    # "= 2379 passed ... =" in pytest's default output, the bare line under -q
    lines = [line.strip("= ") for line in text.splitlines() if re.match(r"=* ?\d+ (passed|failed)\b.* in ", line)]
    return lines[-1] if lines else "no pytest summary line in the log"


def minutes(seconds):
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (3)")
    parser.add_argument("--only", choices=NAMES, help="time one of the two commands")
    parser.add_argument("--workdir", default=None, help="where the clones go (the system's temporary folder)")
    parser.add_argument("--pip-cache", action="store_true",
                        help="let pip use its cache (not a new machine's case: the install gets faster)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be timed, and stop")
    arguments = parser.parse_args()
    commands = readme_commands()
    names = [arguments.only] if arguments.only else list(NAMES)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    changed = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {describe_cpu()}; commit {commit[:12]}"
          + (" (the working tree's changes are not in the clones)" if changed else ""))
    for name in names:
        print(f"  {name}: {commands[name]}")
    if arguments.dry_run:
        return
    seconds, evaluations = {name: [] for name in names}, []  # evaluations: the main command's last ones
    for run in range(1, arguments.runs + 1):
        for name in names:  # alternating, so a slow hour of the machine does not fall on one command only
            folder = fresh_clone(commit, arguments.workdir)
            before = os.getloadavg()[0]
            took, status = time_command(commands[name], folder, arguments.pip_cache)
            after = os.getloadavg()[0]
            if name == "main":
                evaluation = pretraining_result(folder)
                reported = ("no held-out evaluation in runs/*/" + LOG_FILE if evaluation is None else
                            f"held-out MLM {100 * evaluation['mlm_accuracy']:.1f}%, NSP "
                            f"{100 * evaluation['nsp_accuracy']:.1f}% at step {evaluation['step']:,}")
            else:
                evaluation, reported = None, pytest_summary(folder)
            if status == 0:
                seconds[name].append(took)
                if evaluation is not None:
                    evaluations.append(evaluation)
                shutil.rmtree(folder.parent)
                outcome = ""
            else:
                outcome = f"  FAILED (exit {status}; kept: {folder.parent / 'run.log'})"
            print(f"run {run}/{arguments.runs}  {name:5}  {minutes(took)} ({took:.0f} s)  load average "
                  f"{before:.2f} before, {after:.2f} after; {reported}{outcome}", flush=True)
    for name, times in seconds.items():
        if times:
            print(f"{name}: median {minutes(statistics.median(times))} of {len(times)} runs "
                  f"(range {minutes(min(times))}-{minutes(max(times))})")
        else:
            print(f"{name}: no run succeeded")
    if evaluations:
        accuracies = [100 * evaluation["mlm_accuracy"] for evaluation in evaluations]
        steps = [evaluation["step"] for evaluation in evaluations]
        print(f"main: held-out MLM accuracy median {statistics.median(accuracies):.1f}% (range "
              f"{min(accuracies):.1f}-{max(accuracies):.1f}), steps median {statistics.median(steps):,.0f} "
              f"(range {min(steps):,}-{max(steps):,})")
    return 0 if all(len(times) == arguments.runs for times in seconds.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
