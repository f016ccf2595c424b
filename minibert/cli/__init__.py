"""The command line: `python -m minibert <command> ...`.

Each command lives in its own module under `minibert/cli/`, with two functions:
`add_arguments(parser)` and `run(args) -> int | None`. Modules are imported only when their command runs,
so `python -m minibert vocab` does not pay for compiling the model's kernels.

Errors the user can fix (`MinibertError`, a missing file) are printed as one readable line and exit with
status 2; `--debug` shows the full traceback instead.
"""

import argparse
import errno
import importlib
import sys
import warnings

from minibert.cli.arguments import Parser
from minibert.errors import MinibertError
from minibert.surrogates import show_escaped_on
from minibert.train.interrupt import interrupted_inside_native_code, resend_dropped_interrupt

# command name -> (module, one-line help). Add a line here when you add a command module.
COMMANDS = {
    "data": ("minibert.cli.data", "build a corpus, its vocabulary and pretraining shards"),
    "vocab": ("minibert.cli.vocab", "train a WordPiece vocabulary from text files"),
    "pretrain": ("minibert.cli.pretrain", "pretrain BERT (masked LM + NSP) and watch it learn"),
    "fill-mask": ("minibert.cli.fill_mask", "show the model's top guesses for each [MASK] in a text"),
    "attention": ("minibert.cli.attention", "draw each layer's and head's attention over a sentence"),
    "finetune": ("minibert.cli.finetune", "fine-tune BERT on a classification, QA or tagging task"),
    "predict": ("minibert.cli.predict", "run a fine-tuned model on new text"),
    "embed": ("minibert.cli.embed", "sentence embeddings and their cosine similarities"),
    "experiment": ("minibert.cli.experiment", "rerun one of the paper's ablations: arms x seeds, a table"),
}


# What to do about the operating system's errors that a path given by the user causes.
OS_ERROR_ADVICE = {
    errno.ENOTDIR: "a part of that path is a file, not a folder; choose a path under a folder",
    errno.EISDIR: "that is a folder; give the name of a file",
    errno.ENOENT: "check the path",
    errno.EACCES: "you may not write or read there; choose another path",
    errno.ENOSPC: "the disk is full; free some space or choose another disk",
    errno.EEXIST: "something of that name is in the way (a file where a folder belongs?); choose another path",
}


def describe_error(error):
    """One line for an error: ours say what to do already; the operating system's get the path and advice
    (a bare `[Errno 20] Not a directory: 'notes.txt/run'` does not say which part is wrong)."""
    if isinstance(error, MinibertError) or not isinstance(error, OSError) or error.strerror is None:
        return str(error)
    where = f"{error.filename}: " if error.filename is not None else ""
    advice = OS_ERROR_ADVICE.get(error.errno)
    return f"{where}{error.strerror}" + (f"; {advice}" if advice else "")


def build_parser():
    parser = Parser(prog="python -m minibert", description="BERT from nothing but NumPy.")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    commands = parser.add_subparsers(dest="command", metavar="command")
    for name, (module_name, help_text) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show the full traceback on errors")
        sub.set_defaults(module_name=module_name)
        importlib.import_module(module_name).add_arguments(sub)
    return parser


def show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning as one line `warning: ...`: ours say what happened and what to do, and the line of minibert
    that raised it (Python's default shows it) means nothing to the user."""
    print(f"warning: {message}", file=file or sys.stderr)


def interrupted():
    """Ctrl-C: the command has said what it kept (if anything); exit as a shell expects after SIGINT."""
    print("\ninterrupted", file=sys.stderr)
    sys.exit(130)


def main(argv=None, parser=None):
    """Run the command in `argv` (sys.argv when None); `parser` is build_parser()'s, when the caller has built
    it already (`python -m minibert` does, with Ctrl-C held back while the modules load)."""
    # A path or an argument may hold bytes that are not UTF-8: whatever is printed shows them as \xff. First,
    # since argparse's own errors quote the arguments.
    show_escaped_on(sys.stdout, sys.stderr)
    try:
        parser = parser or build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        interrupted()
    if args.command is None:
        parser.print_help()
        sys.exit(2)
    sys.unraisablehook = resend_dropped_interrupt  # a Ctrl-C inside Numba's compiler is not dropped
    warnings.showwarning = show_warning
    try:
        status = importlib.import_module(args.module_name).run(args)
    except KeyboardInterrupt:
        interrupted()
    except SystemError as error:
        if args.debug or not interrupted_inside_native_code(error):
            raise
        interrupted()
    except (MinibertError, OSError) as error:
        if args.debug:
            raise
        print(f"error: {describe_error(error)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(status or 0)
