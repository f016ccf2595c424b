"""Ctrl-C as a request: the first SIGINT asks a loop to stop after its current step (and save), instead of
breaking into the middle of a computation; a second one quits at once."""

import signal
import threading


class StopRequest:
    """Turns the first Ctrl-C (SIGINT) into `requested = True`, for the block; `notify(message)` says so."""

    def __init__(self, notify, message="Ctrl-C: stopping after this step and saving a checkpoint (Ctrl-C again "
                                        "to quit now)"):
        self.requested = False
        self.notify, self.message = notify, message

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.requested = True
        # A second Ctrl-C quits at once (Python's default: KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.notify(self.message)

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
