"""One live progress line: where the run is, how well it does, how fast it goes, and when it will end.

    step 420/3000  loss 5.812  MLM 14.2%  NSP 61.0%  lr 9.1e-04  6,010 tok/s  ETA 7:05

In a terminal the line is redrawn in place (a carriage return `\\r` moves the cursor back to the start of
the line), so the screen shows one line that changes. Written to a file or a pipe (a CI log), `\\r` would
pile up into one enormous line, so there the progress comes as plain lines, at most one every `every`
seconds. Messages (an evaluation, a checkpoint) go above the live line with `message()`.
"""

import shutil
import sys
import time


def format_duration(seconds):
    """12:34 or 1:02:03; '?' when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def progress_text(step, total_steps, loss, mlm_accuracy, nsp_accuracy, lr, tokens_per_second, eta_seconds):
    """The progress line's text (accuracies are ratios; None leaves a figure out)."""
    parts = [f"step {step}/{total_steps}", f"loss {loss:.3f}", f"MLM {mlm_accuracy:.1%}"]
    if nsp_accuracy is not None:
        parts.append(f"NSP {nsp_accuracy:.1%}")
    parts += [f"lr {lr:.1e}", f"{tokens_per_second:,.0f} tok/s", f"ETA {format_duration(eta_seconds)}"]
    return "  ".join(parts)


class ProgressLine:
    """A line redrawn in place on a terminal, or plain lines every `every` seconds elsewhere."""

    def __init__(self, stream=None, every=10.0, live=None):
        self.stream = sys.stderr if stream is None else stream
        self.live = self.stream.isatty() if live is None else live
        self.every = every
        self.shown = ""  # the live line currently on screen
        self.last_plain = None  # when the last plain line was written

    def update(self, text, force=False):
        """Show `text` as the current progress."""
        if self.live:
            width = shutil.get_terminal_size().columns - 1
            text = text[:width]
            # Spaces wipe the end of a longer previous line.
            self.stream.write("\r" + text + " " * max(0, len(self.shown) - len(text)))
            self.shown = text
        else:
            now = time.monotonic()
            if not (force or self.last_plain is None or now - self.last_plain >= self.every):
                return
            self.stream.write(text + "\n")
            self.last_plain = now
        self.stream.flush()

    def message(self, text):
        """Print `text` on its own line, above the live line, which is drawn again below it."""
        if self.live and self.shown:
            self.stream.write("\r" + " " * len(self.shown) + "\r" + text + "\n" + self.shown)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        """End the live line, so that what is printed next starts on a fresh line."""
        if self.live and self.shown:
            self.stream.write("\n")
            self.stream.flush()
        self.shown = ""
