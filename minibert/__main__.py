"""`python -m minibert ...` runs the command line."""

import signal

# Loading the command line loads Numba and the kernels' compiled code, where Python's KeyboardInterrupt is
# either printed as a traceback or raised inside a callback of Numba's compiler and dropped. So a Ctrl-C
# while loading (the package, then every command's module) is noted, and acted on once loading is over
# (train/interrupt.py says more).
pressed_while_loading = []
signal.signal(signal.SIGINT, lambda signum, frame: pressed_while_loading.append(signum))
from minibert.cli import build_parser, interrupted, main  # noqa: E402

parser = build_parser()  # imports every command's module, and with them the model and its kernels
signal.signal(signal.SIGINT, signal.default_int_handler)
if pressed_while_loading:
    interrupted()
main(parser=parser)
