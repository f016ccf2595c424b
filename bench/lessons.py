"""Wall time of every lesson script (01 to 22, 05a, 05b and 06a included): the median of several runs, their
spread, and the first run apart, printed as a table to paste into docs/performance.md ("The lessons").

    python bench/lessons.py                  # quick mode, 3 runs of each lesson
    python bench/lessons.py --runs 5         # more runs: a steadier median
    python bench/lessons.py --only 12,16     # some lessons only
    python bench/lessons.py --full           # the pretraining and experiment lessons' --full mode

Each run is a fresh process with a fresh, empty output folder: a lesson that reuses what an earlier run left
in lessons/output/ (lesson 14's pretrained model, the experiments' saved runs) would otherwise time the
shortcut. The runs go round the lessons (every lesson once, then again), so a spell of load on a shared
machine spreads over all of them instead of landing on one. Times include Python start-up, imports and Numba
cache loading, as a student experiences them; the first round also includes compiling the Numba kernels
when the cache is cold (a fresh clone) and making data/synthetic/build/, which is why it is shown apart
from the median. The load average before and after says whether the machine was busy: figures from a busy
machine are not typical ones.
"""

import argparse
import datetime
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench/cpu.py's import

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"


def lesson_scripts(only):
    """The numbered lesson scripts in course order (05 before 05a), or those whose number is in `only`."""
    scripts = sorted(LESSONS_DIR.glob("[0-9][0-9]*_*.py"))
    if only:
        scripts = [script for script in scripts if script.name.split("_")[0] in only]
    return scripts


def time_lesson(script, extra):
    """Seconds one run of `script` takes in a process of its own, and whether it passed."""
    with tempfile.TemporaryDirectory() as output:
        env = {**os.environ, "MINIBERT_LESSON_OUTPUT": output}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, script.name, *extra], cwd=LESSONS_DIR, env=env,
                              capture_output=True, text=True, check=False)
        return time.perf_counter() - start, done.returncode == 0


def load_average():
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each lesson (default 3)")
    parser.add_argument("--only", default="", help="comma-separated lesson numbers, e.g. 12,16,05b")
    parser.add_argument("--full", action="store_true", help="run the lessons with --full")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: give at least 1")
    scripts = lesson_scripts({number.strip() for number in args.only.split(",") if number.strip()})
    if not scripts:
        parser.error(f"--only {args.only}: no lesson has that number; they are named like 05b_encoder_layer.py")
    extra = ["--full"] if args.full else []
    command = shlex.join(["python", "bench/lessons.py", *sys.argv[1:]])
    print(f"{command}\n{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {describe_cpu()}; "
          f"load average before: {load_average()}", flush=True)
    times = {script: [] for script in scripts}
    failed = set()
    for round_number in range(1, args.runs + 1):
        for script in scripts:
            seconds, passed = time_lesson(script, extra)
            times[script].append(seconds)
            if not passed:
                failed.add(script)
            print(f"  run {round_number}/{args.runs}  {script.name:<32} {seconds:7.1f} s"
                  f"{'' if passed else '  FAILED'}", flush=True)
    print(f"load average after: {load_average()}")
    if max(os.getloadavg()) > os.cpu_count():
        print("(the load average passed the core count: other work shared the CPU, so these times are not typical)")
    print()
    print("| lesson | median, s | spread (min-max), s | first run, s |")
    print("|---|---:|---:|---:|")
    for script, seconds in times.items():
        status = " (failed)" if script in failed else ""
        print(f"| {script.stem}{status} | {statistics.median(seconds):.1f} | {min(seconds):.1f}-{max(seconds):.1f} "
              f"| {seconds[0]:.1f} |")
    medians = [statistics.median(seconds) for seconds in times.values()]
    print(f"| all {len(scripts)} ({'--full' if extra else 'quick mode'}) | {sum(medians):.1f} | | |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
