"""`python -m minibert.exercises list | start NN | check NN | reset NN` (see __init__.py)."""

import sys

from minibert.cli.arguments import Parser
from minibert.exercises import catalog, workspace
from minibert.exercises.markers import MarkerError
from minibert.surrogates import show_escaped_on


def list_lessons():
    marked = workspace.scan_package()
    for lesson in (*catalog.LESSONS, catalog.CAPSTONE):
        print(f"{lesson.number}  {lesson.title}   (lessons/{lesson.script})")
        for exercise_id, task in lesson.exercises:
            where = marked[exercise_id].path if exercise_id in marked else "NOT MARKED YET"
            print(f"      {exercise_id:<26} {task}  [{where}]")


def main(argv=None):
    show_escaped_on(sys.stdout, sys.stderr)  # a --dir holding a byte that is not UTF-8 prints as \xff
    parser = Parser(prog="python -m minibert.exercises",
                                     description="Re-implement pieces of minibert; pytest says what is wrong")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    commands.add_parser("list", help="the lessons and their exercises")
    for name, help_text in (("start", "write the workspace of lesson NN (default folder exercises/NN)"),
                            ("check", "run the tests of lesson NN against your workspace"),
                            ("reset", "start lesson NN over; the old workspace is kept as <dir>.old (.2.old, ...)")):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("lesson", help="the lesson number (list shows which have exercises), or capstone")
        sub.add_argument("--dir", default=None, help="the workspace folder (default: exercises/NN)")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            list_lessons()
        elif args.command == "start":
            path = workspace.start(args.lesson, args.dir)
            print((path / "README.md").read_text(encoding="utf-8"))
        elif args.command == "reset":
            path, backup = workspace.reset(args.lesson, args.dir)
            kept = f"; your previous files are in {backup}" if backup else ""
            print(f"lesson {catalog.lesson(args.lesson).number} starts over in {path}{kept}")
        else:
            status, _ = workspace.check(args.lesson, args.dir)
            return status
    except (KeyError, ValueError, OSError, MarkerError) as error:
        print(f"error: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
