"""Ctrl-C as a request: the first SIGINT asks a loop to stop after its current step (and save), instead of
breaking into the middle of a computation; a second one quits at once.

Why not Python's own KeyboardInterrupt: it is raised wherever the signal lands. Inside a Numba kernel it
comes back out as `SystemError: CPUDispatcher(...) returned a result with an exception set`, and inside a
callback of Numba's compiler it is printed and then ignored, so the run goes on. A flag set by the handler
and read between steps stops the same way every time.

    with StopRequest(progress.message) as stop:
        for batch in batches:
            ...one step...
            if stop.requested:
                break          # save, say what was saved, then stop

A loop inside another (a fine-tuning run inside an experiment) shares the outer block's request, so one
Ctrl-C stops both, each at its own next step; `stop_if_requested()` ends such an inner loop.
"""

import signal
import sys
import threading


class StopRequest:
    """Turns the first Ctrl-C (SIGINT) into `requested = True`, for the block; `notify(message)` says so."""

    _outermost = None  # the block whose handler is installed; blocks opened inside it share its request

    def __init__(self, notify, message="Ctrl-C: stopping after this step and saving a checkpoint (Ctrl-C again "
                                        "to quit now)"):
        self.requested = False
        self.notify, self.message = notify, message

    def __enter__(self):
        self.previous, self.shares = None, StopRequest._outermost
        if self.shares is not None:
            return self.shares
        if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
            self.previous = signal.signal(signal.SIGINT, self._handle)
            StopRequest._outermost = self
        return self

    def _handle(self, signum, frame):
        self.requested = True
        # A second Ctrl-C quits at once (Python's default: KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.notify(self.message)

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            StopRequest._outermost = None


def stop_if_requested():
    """Raise KeyboardInterrupt here, between two steps, if Ctrl-C was pressed inside a `StopRequest` block:
    for inner loops that have nothing of their own to save (the caller says what is kept)."""
    if StopRequest._outermost is not None and StopRequest._outermost.requested:
        raise KeyboardInterrupt


def interrupted_inside_native_code(error):
    """True for the SystemError that a KeyboardInterrupt becomes when it lands inside a Numba call (a second
    Ctrl-C, or one outside any `StopRequest` block): the command line reports it as an interruption."""
    cause = error.__cause__ or error.__context__
    return isinstance(error, SystemError) and isinstance(cause, KeyboardInterrupt)


def how_it_stopped(error, diverged_kind):
    """What a run's log and report say of a session that `error` ended: "interrupted" (Ctrl-C, wherever it
    landed), "diverged" (an instance of `diverged_kind`, the loop's non-finite step) or "failed"."""
    if isinstance(error, KeyboardInterrupt) or interrupted_inside_native_code(error):
        return "interrupted"
    return "diverged" if isinstance(error, diverged_kind) else "failed"


def resend_dropped_interrupt(unraisable):
    """`sys.unraisablehook` for the command line. A KeyboardInterrupt raised inside a callback of Numba's
    compiler (a ctypes callback) cannot propagate: Python would print it as "Exception ignored" and go on, and
    the Ctrl-C would be lost. Sending SIGINT again lands it in Python code, where it stops the command."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    else:
        sys.__unraisablehook__(unraisable)
