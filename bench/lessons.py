"""Wall time of every lesson script, each in a fresh process: the course promises under 60 s per lesson on
2 cores in quick mode.

    python3 bench/lessons.py            # quick mode (what a student runs first)
    python3 bench/lessons.py --full     # the pretraining lessons' --full mode as well

Pictures go to a temporary folder. Times include Python start-up, imports and any Numba cache loading,
as a student experiences them.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench/cpu.py's import

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LIMIT_S = 60.0


def main():
    print(f"CPU: {describe_cpu()}")
    extra = ["--full"] if "--full" in sys.argv else []
    rows = []
    with tempfile.TemporaryDirectory() as output:
        env = {**os.environ, "MINIBERT_LESSON_OUTPUT": output}
        for script in sorted(LESSONS_DIR.glob("[0-9][0-9]_*.py")):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, str(script), *extra], env=env, capture_output=True,
                                  text=True, check=False)
            seconds = time.perf_counter() - start
            status = "ok" if done.returncode == 0 else f"FAILED ({done.returncode})"
            rows.append((script.name, seconds, status))
            print(f"{script.name:<32} {seconds:7.1f} s  {status}{'  OVER 60 s' if seconds > LIMIT_S else ''}",
                  flush=True)
    print(f"{'total':<32} {sum(seconds for _, seconds, _ in rows):7.1f} s  ({len(rows)} lessons, "
          f"{'--full' if extra else 'quick mode'})")
    return 0 if all(status == "ok" for *_, status in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
