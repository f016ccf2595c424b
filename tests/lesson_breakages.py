"""Breakages of the library that destroy a lesson's point; `test_lesson_breakage.py` runs each lesson under one.

The lesson-level version of `exercise_mutants.py`: each breakage patches minibert in the lesson's own process
(a class's method or a module's function, so every caller sees it), and the lesson must then fail one of
its own asserts, not crash. Run one by hand from the repository root:

    python tests/lesson_breakages.py 05b_encoder_layer "no residual in SublayerOutput"

exits with CLAIM_FAILED and the failing assert's traceback, or 0 if the lesson did not notice.
"""

import runpy
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR = ROOT / "lessons"
CLAIM_FAILED = 3  # the exit status when one of the lesson's own asserts failed


@dataclass(frozen=True)
class Breakage:
    lesson: str  # the lesson's file name without .py
    name: str  # what is broken, in a few words
    apply: object  # a function of no arguments that patches minibert in this process


def replace_code(function, replacement):
    """Run `replacement`'s body wherever `function` is called, even through a name imported elsewhere.

    The body runs with `function`'s module as its globals, so it may use only the names that module has."""
    function.__code__ = replacement.__code__


# lesson 05b: the residual keeps the input alive through a deep post-LN stack
def no_residual_in_sublayer_output():
    from minibert.nn import SublayerOutput

    def forward(self, h, residual):
        return self.LayerNorm(self.dropout(self.dense(h)))
    SublayerOutput.forward = forward


# lesson 11: BertAdam's early steps are oversized because it has no bias correction
def bias_correction_in_bert_adam():
    from minibert.optim import AdamW, BertAdam
    BertAdam.update = AdamW.update  # Adam's corrected step, with BertAdam's decoupled decay


BREAKAGES = (
    Breakage("05b_encoder_layer", "no residual in SublayerOutput", no_residual_in_sublayer_output),
    Breakage("11_adam_schedule", "BertAdam given bias correction", bias_correction_in_bert_adam),
)


def run_broken(lesson, name):
    """Apply the breakage, then run the lesson as `python lessons/<lesson>.py` runs it, in this process."""
    sys.path[:0] = [str(LESSONS_DIR), str(ROOT)]  # the lesson's `import course`, and this checkout's minibert
    (breakage,) = [b for b in BREAKAGES if (b.lesson, b.name) == (lesson, name)]
    script = LESSONS_DIR / f"{lesson}.py"
    breakage.apply()
    sys.argv = [str(script)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except AssertionError as error:
        if traceback.extract_tb(error.__traceback__)[-1].filename != str(script):
            raise  # an assert inside minibert is a crash of the library, not the lesson noticing
        traceback.print_exc()
        sys.exit(CLAIM_FAILED)


if __name__ == "__main__":
    run_broken(*sys.argv[1:])
