"""`python -m minibert ...` runs the command line."""

from minibert.cli import main

main()
