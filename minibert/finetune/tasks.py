"""The tasks `python -m minibert finetune --task ...` knows, and where their data is.

Three kinds of task, each a module with the same parts (see `classification.py`):

    classification       ClassificationTask      sentiment, story-pairs (synthetic), package-topics, doc-pairs,
                                                 dependency-topics (real text), glue-tsv (your GLUE-style TSV)
    question_answering   QuestionAnsweringTask   qa (synthetic), squad (your SQuAD v1.1 JSON)
    tagging              TaggingTask             ner (synthetic), conll (your CoNLL file)

A task's own files (TASKS) are written to the data folder when missing (`data/location.py`: the checkout's
data/, MINIBERT_DATA, or ~/.cache/minibert; never the current folder); glue-tsv, squad and conll read yours.
"""

# The synthetic tasks read data/synthetic/{sentiment,qa,ner}_{train,dev}.*, committed; when they are missing
# (minibert installed without its repository) they are written there first, from the same seed. The others
# read data/{story_pairs,package_topics,doc_pairs,dependency_topics}/{train,dev}.tsv (document_pairs.py,
# package_topics.py, dependency_topics.py):
#     story-pairs     is B one of the 3 sentences after A in its synthetic story, or from another story?
#     package-topics  which of pip's vendored libraries a docstring sentence comes from (3 labels)
#     doc-pairs       is B one of the 3 sentences after A in its docstring document, or from another
#                     document of the same library? (`same` or `other`, balanced, like story-pairs)
#     dependency-topics  package-topics' question of other libraries, those requirements.txt brings in
#                     (trio, selenium, pygments): which one a docstring sentence comes from (3 labels)
# The real-text files are never committed: their text is that of the pip installed here. They leave out
# every sentence of the pydocs corpus (data/pydocs/corpus.txt, built first if missing), the corpus their
# question is meant to test; to leave out another corpus, build them with `build_package_topics` or
# `build_document_pairs` and pass --train and --dev.

from pathlib import Path

from minibert.data.build import resolve_corpus
from minibert.data.corpora.dependency_topics import build_dependency_topics
from minibert.data.corpora.document_pairs import build_document_pairs, build_story_pairs
from minibert.data.corpora.package_topics import build_package_topics
from minibert.data.corpora.synthetic import write_tasks
from minibert.data.location import data_folder
from minibert.errors import ConfigError
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.question_answering import QuestionAnsweringTask
from minibert.finetune.tagging import TaggingTask

TASK_KINDS = {task.kind: task for task in (ClassificationTask, QuestionAnsweringTask, TaggingTask)}
SYNTHETIC_DIR = "synthetic"  # the folders below are inside the data folder (data/location.py)
SYNTHETIC_SEED = 0  # the seed of the committed files
PYDOCS_DIR = "pydocs"
REAL_TEXT_SEED = 0  # package-topics: the files of bench/transfer.py at 300 training sentences a label


def write_synthetic(data_dir, log):
    log(f"writing the synthetic fine-tuning sets to {data_dir} (seed {SYNTHETIC_SEED})")
    data_dir.mkdir(parents=True, exist_ok=True)
    write_tasks(data_dir, SYNTHETIC_SEED)


def write_story_pairs(data_dir, log):
    log(f"writing {data_dir}/train.tsv and dev.tsv from synthetic stories the corpus never holds "
        f"(seed {SYNTHETIC_SEED})")
    build_story_pairs(data_dir, seed=SYNTHETIC_SEED)


def real_text_writer(build, source="pip's libraries"):
    """A writer of a real-text task's files: `build(out_dir, seed=, pretraining_corpus=)` without pydocs."""
    def write(data_dir, log):
        corpus = resolve_corpus("pydocs", data_folder() / PYDOCS_DIR, log)
        log(f"writing {data_dir}/train.tsv and dev.tsv from the docstrings of {source}, without the "
            f"sentences of {corpus} (seed {REAL_TEXT_SEED})")
        build(data_dir, seed=REAL_TEXT_SEED, pretraining_corpus=corpus)
    return write


# --task name -> (kind, the folder of its files inside the data folder, their name pattern, what writes them
# when missing); the last three are None for a task that reads the user's own files
TASKS = {
    "sentiment": ("classification", SYNTHETIC_DIR, "sentiment_{split}.tsv", write_synthetic),
    "qa": ("question_answering", SYNTHETIC_DIR, "qa_{split}.json", write_synthetic),
    "ner": ("tagging", SYNTHETIC_DIR, "ner_{split}.conll", write_synthetic),
    "story-pairs": ("classification", "story_pairs", "{split}.tsv", write_story_pairs),
    "package-topics": ("classification", "package_topics", "{split}.tsv",
                       real_text_writer(build_package_topics)),
    "doc-pairs": ("classification", "doc_pairs", "{split}.tsv", real_text_writer(build_document_pairs)),
    "dependency-topics": ("classification", "dependency_topics", "{split}.tsv",
                          real_text_writer(build_dependency_topics, "minibert's dependencies")),
    "glue-tsv": ("classification", None, None, None),
    "squad": ("question_answering", None, None, None),
    "conll": ("tagging", None, None, None),
}


def task_kind(name):
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return TASKS[name][0]


def make_task(name, tokenizer, **options):
    """A task object for `--task name`; options are its settings (max_seq_length, labels, ...)."""
    return TASK_KINDS[task_kind(name)](tokenizer, **options)


def data_files(name, train=None, dev=None, data_dir=None, log=print):
    """(train file, dev file): the given ones, or the task's own files (in `data_dir`, default its folder),
    written first when missing."""
    _, folder, pattern, write = TASKS.get(name, (None, None, None, None))
    if pattern is None:
        if train is None or dev is None:
            raise ConfigError(f"--task {name} reads your own data: pass --train FILE and --dev FILE")
        return Path(train), Path(dev)
    data_dir = Path(data_dir) if data_dir is not None else data_folder() / folder
    defaults = [data_dir / pattern.format(split=split) for split in ("train", "dev")]
    if not all(path.is_file() for path in defaults) and (train is None or dev is None):
        write(data_dir, log or (lambda _: None))
    return Path(train or defaults[0]), Path(dev or defaults[1])
