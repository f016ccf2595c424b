"""What every lesson script shares: the import path, the output folder for pictures, and quick/--full mode.

A lesson starts with `import course`. Run from a fresh clone (`python lessons/05_attention_masks.py`), the
repository root may not be on the import path yet; this puts it there, so no install is needed.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Every lesson saves its SVGs here (git-ignored); tests point MINIBERT_LESSON_OUTPUT at a temporary folder.
OUTPUT = Path(os.environ.get("MINIBERT_LESSON_OUTPUT", Path(__file__).resolve().parent / "output"))
FULL = "--full" in sys.argv  # the pretraining lessons run longer with --full; quick mode is the default


def save(name, text):
    """Write an SVG picture or an HTML page to lessons/output/<name> and say where it went."""
    from minibert.viz import save_svg  # writes any text atomically

    path = OUTPUT / name
    save_svg(path, text)
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"({'page' if path.suffix == '.html' else 'picture'} saved: {shown} -- open it in a browser)")


def title(text):
    print(f"\n=== {text} ===")
