"""`python -m minibert experiment NAME`: rerun one of the paper's comparisons on this machine.

    python -m minibert experiment masking             # quick: about a minute, tiny model, synthetic text
    python -m minibert experiment masking --full      # what docs/experiments.md reports (about 10 minutes)
    python -m minibert experiment masking --mini      # the same on the mini model (an hour or more)
    python -m minibert experiment nsp --seeds 5 --out runs/nsp5
    python -m minibert experiment ladder --full --rung 60min=runs/my-hour

Every arm runs with each seed; each run's result is saved in --out as it ends, so a stopped experiment
(Ctrl-C) goes on where it stopped when the same command runs again. At the end it prints the table (mean ±
sample standard deviation, min-max, over the seeds) and writes results.json and experiment-NAME.svg.

    NUMBA_NUM_THREADS=1 python -m minibert experiment ladder --full &          # two processes, a core each,
    NUMBA_NUM_THREADS=1 python -m minibert experiment ladder --full --join     # sharing one folder's runs
"""

import argparse
import contextlib
import sys
from pathlib import Path

from minibert.cli.arguments import whole_number
from minibert.experiments import EXPERIMENTS, load_experiment
from minibert.train.interrupt import StopRequest

RECOMMENDED_SEEDS = 3


def add_arguments(parser):
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    width = max(len(name) for name in EXPERIMENTS)
    parser.epilog = "experiments:\n" + "\n".join(f"  {name:{width}}  {line}"
                                                 for name, (_, line) in EXPERIMENTS.items()) + "\n"
    parser.add_argument("name", choices=list(EXPERIMENTS), metavar="NAME",
                        help="which experiment (listed below)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--quick", dest="mode", action="store_const", const="quick",
                       help="about a minute: the tiny model, 70-80 steps, measures that move by then (the default)")
    modes.add_argument("--full", dest="mode", action="store_const", const="full",
                       help="10 to 30 minutes on 2 cores: ten times the steps, the whole task sets")
    modes.add_argument("--mini", dest="mode", action="store_const", const="mini",
                       help="the full mode on the mini model (4 layers, width 256): minutes per run, an hour "
                            "or more per experiment")
    parser.set_defaults(mode="quick")
    parser.add_argument("--seeds", type=whole_number("the number of seeds per arm"), default=RECOMMENDED_SEEDS,
                        help=f"seeds per arm ({RECOMMENDED_SEEDS}; fewer make the spread meaningless)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="where runs and results go (default runs/experiments/NAME-MODE)")
    parser.add_argument("--rung", metavar="NAME=DIR", action="append", default=[], type=rung_folder,
                        help="ladder and sentence-task: the model folder of a rung (15min, 60min, 60min_large, "
                             "minilm; 15min_sop, 15min_none) instead of its default (runs/mini-pydocs, "
                             "runs/mini-pydocs-60min, ..., the all-MiniLM-L6-v2 package)")
    parser.add_argument("--join", action="store_true",
                        help="share the runs of an experiment already running in --out, with the same "
                             "command: each process makes the next run no other has claimed (give each "
                             "its share of the cores: NUMBA_NUM_THREADS=1 on 2 cores, for two)")
    parser.add_argument("--so-far", action="store_true",
                        help="run nothing: write results-so-far.json and the picture from the runs saved in "
                             "--out so far (while the experiment runs there, or after it was stopped); a "
                             "damaged run record is set aside as NAME.damaged, as a run would, and left out")


def rung_folder(text):
    name, equals, folder = text.partition("=")
    if not equals or not name or not folder:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=DIR, e.g. 15min=runs/mini-pydocs")
    return name, folder


def command_line(args):
    return (f"python -m minibert experiment {args.name} --{args.mode}"
            + (f" --seeds {args.seeds}" if args.seeds != RECOMMENDED_SEEDS else "")
            + (f" --out {args.out}" if args.out else "")
            + "".join(f" --rung {name}={folder}" for name, folder in args.rung))


def with_rungs(experiment, name, folders):
    """The ladder (or sentence-task) with the rung folders of --rung; another experiment refuses the option."""
    import dataclasses

    from minibert.errors import ConfigError
    from minibert.experiments.ladder import with_folders

    if name not in ("ladder", "sentence-task"):
        raise ConfigError(f"--rung is the option of ladder and sentence-task; experiment {name} has no rungs")
    return dataclasses.replace(experiment, settings=lambda mode: with_folders(experiment.settings(mode), folders))


def run(args):
    from minibert.experiments.runner import RESULTS_FILE, run_experiment
    from minibert.io.folder_lock import FolderLock
    from minibert.io.overwrite import check_not_a_file

    experiment = load_experiment(args.name)
    if args.rung:
        experiment = with_rungs(experiment, args.name, dict(args.rung))
    out = Path(args.out or Path("runs", "experiments", f"{args.name}-{args.mode}"))
    arms = experiment.arms(args.mode)
    check_not_a_file(out, "--out")
    if args.so_far:
        return report_so_far(experiment, args, out)
    if args.seeds < RECOMMENDED_SEEDS:
        print(f"warning: {args.seeds} seed(s) per arm; with fewer than {RECOMMENDED_SEEDS} the spread says "
              "little about the noise, and a difference between arms may be luck", file=sys.stderr)
    # Locked, as pretrain's and finetune's folders are: a second experiment started there by mistake is
    # refused. One started with --join shares the runs instead: each run is claimed by the process making it
    # (runner.py), so none is made twice.
    with contextlib.nullcontext() if args.join else FolderLock(out, "experiment"):
        print(f"experiment {args.name} ({args.mode}): {len(arms)} arms x {args.seeds} seeds = "
              f"{len(arms) * args.seeds} runs, saved in {out}" + (" (joined)" if args.join else ""))
        # Ctrl-C stops at the next training step, or the probe's next batch of sentences, not inside a kernel;
        # the runs already finished stay saved.
        with StopRequest(lambda message: print(f"\n{message}", file=sys.stderr),
                         "Ctrl-C: stopping at the next training step, or the next batch of sentences a probe "
                         "encodes (Ctrl-C again to quit now)"):
            records = run_experiment(experiment, args.mode, args.seeds, out, command=command_line(args))
        left = len(arms) * args.seeds - len(records)  # runs another process (--join) is still making
        if left:
            print(f"{left} run{' is' if left == 1 else 's are'} still being made by another process in {out}; "
                  f"the last one to end writes {RESULTS_FILE} (`--so-far` shows the runs saved until then)")
            return
        report(experiment, args, out, records, RESULTS_FILE, f"experiment-{args.name}.svg")


def report_so_far(experiment, args, out):
    """--so-far: the results of the runs saved in `out`, without taking its lock (an experiment may be
    running there: it writes each record whole, by renaming, so what is read here is never half a run)."""
    from minibert.errors import ConfigError
    from minibert.experiments.runner import saved_records

    saved = saved_records(experiment, args.mode, args.seeds, out, lambda line: print(line, file=sys.stderr))
    records = [record for record in saved.values() if record is not None]
    if not records:
        raise ConfigError(f"{out} holds no finished run of experiment {args.name} --{args.mode} yet; start it "
                          f"with `{command_line(args)}`")
    print(f"experiment {args.name} ({args.mode}): {len(records)} of {len(saved)} runs so far, in {out}")
    report(experiment, args, out, records, "results-so-far.json", f"experiment-{args.name}-so-far.svg",
           planned=len(saved))


def report(experiment, args, out, records, results_name, figure_name, planned=None):
    """Print the table and write the results record and the picture of `records` into `out`."""
    from minibert.experiments.results import draw_results, results_record, write_results
    from minibert.experiments.summary import summarize_runs
    from minibert.experiments.table import format_table

    record = results_record(experiment, args.mode, records, command_line(args), out)
    if planned is not None:
        record["runs_planned"] = planned  # a record of part of an experiment says how much of it
    metrics, arms = experiment.metrics(args.mode), experiment.arms(args.mode)
    print(format_table(summarize_runs(records, arms, metrics), metrics, arms))
    print(experiment.note)
    results = write_results(out / results_name, record)
    figure = (experiment.figure or draw_results)(out / figure_name, record)
    print(f"CPU: {record['cpu']}\nresults: {results}\npicture: {figure}")
