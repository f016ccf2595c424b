"""The `synthetic` corpus: bilingual (English, Chinese) stories from a small grammar, and what comes with it.

Every story has its own random stream, `random.Random("minibert-synthetic/<seed>/<split>/<index>")`, so
story 17 is the same whatever the number of stories, and the probe's stories ("probe" split) are never
those of the corpus ("corpus" split).

The fine-tuning sets are written first, because the corpus must leave out their dev sentences.
"""

# `build_synthetic(out_dir, seed)` writes, deterministically for a given seed:
#
# - `corpus.txt`: the pretraining corpus in Google's format (one sentence per line, a blank line between
#   documents). Each document is one story (`synthetic_stories`) in one language. Chinese is written with a
#   single space between words, punctuation included: `小明 给 小红 买 了 一 本 书 。`. BERT's tokenizer splits
#   Chinese into characters either way, so the spaces change no token; they are the word boundaries that
#   whole-word masking needs for Chinese (google-research/bert #780). English is ordinary text. The stories
#   speak the tasks' language (opinions, questions, entities), but never a dev example: a story sentence
#   that is a sentiment or tagging dev sentence is left out of the corpus.
# - `probe.jsonl`: the right-context probe for `bench/probe.py`, one JSON object per line:
#   `{"text", "word", "char_start", "char_end", "choices", "language", "family"}`. Mask
#   `text[char_start:char_end]` (which equals `word`) and ask the model to pick among `choices`; chance is
#   1/len(choices). `text` is the sentence with the blank and the sentence before it, in corpus form. The
#   items come from held-out stories (their random streams are never used for corpus.txt), with the same
#   number of items for every word of every family.
# - the fine-tuning sets of `synthetic_tasks`: `sentiment_{train,dev}.tsv`, `qa_{train,dev}.json`,
#   `ner_{train,dev}.conll`;
# - `versions.json`: the seed, the sizes, and the sha256 of every file.

import hashlib
import json
import random
import time
from pathlib import Path

from minibert.data.corpora.corpus_file import write_corpus
from minibert.data.corpora.synthetic_grammar import SYNTHETIC_RIGHT_CONTEXT, render
from minibert.data.corpora.synthetic_stories import story
from minibert.data.corpora.synthetic_tasks import TASK_SIZES, write_ner, write_qa, write_sentiment

GRAMMAR_VERSION = 2  # bump when the grammar changes, so old corpora are recognisably different
DEFAULT_DOCUMENTS = 6000  # about 6 MB of text, 150,000 sentences
PROBE_ITEMS_PER_WORD = 30
PROBE_FILE = "probe.jsonl"


def _random(seed, split, index=None):
    """The random stream of one story or one file: a string seed, so it is the same on every machine."""
    return random.Random(f"minibert-synthetic/{seed}/{split}" + ("" if index is None else f"/{index}"))


def synthetic_story(seed, split, index):
    """(language, lines) of story `index` of a split ("corpus", "probe"): half Chinese, half English."""
    rng = _random(seed, split, index)
    language = rng.choice(("zh", "en"))
    return language, story(rng, language)


def sentence_key(text):
    """What "the same sentence" means between corpus and tasks: no spaces (corpus Chinese has them between
    words, task Chinese has none, a CoNLL file has them between tokens) and lowercase (the tokenizer is
    uncased)."""
    return "".join(text.split()).lower()


def corpus_documents(seed, num_documents, held_out=frozenset()):
    """Yield the documents of corpus.txt: lists of sentences in corpus form.

    held_out: `sentence_key`s of sentences the corpus must not contain (the dev sentences, from
    `write_tasks`); a story just loses such a line. About 2 lines in 100 go (seed 0), mostly short ones
    such as `They both live in New York.`, and every story keeps its structure. Dropping a line never
    depends on a later blank word, so the right-context property holds (right-context sentences are
    never task sentences: see `synthetic_tasks._ner_sentences`).
    """
    for index in range(num_documents):
        language, lines = synthetic_story(seed, "corpus", index)
        sentences = (render([line.words], language)[0] for line in lines)
        yield [sentence for sentence in sentences if sentence_key(sentence) not in held_out]


def probe_items(seed, per_word=PROBE_ITEMS_PER_WORD):
    """Yield probe items from held-out stories until every word of every family has `per_word` items."""
    quota = {(family.name, word): per_word
             for family in SYNTHETIC_RIGHT_CONTEXT.values() for word in family.choices}
    index = 0
    while any(quota.values()):
        language, lines = synthetic_story(seed, "probe", index)
        index += 1
        for number, line in enumerate(lines):
            blank = next((position for position, word in enumerate(line.words) if word.family), None)
            if blank is None or quota[line.words[blank].family, line.words[blank].text] == 0:
                continue
            family = SYNTHETIC_RIGHT_CONTEXT[line.words[blank].family]
            quota[family.name, line.words[blank].text] -= 1
            before = [lines[number - 1].words] if number else []
            text, spans = render([*before, line.words], language)
            start, end = spans[-1][blank]
            yield {"text": text, "word": text[start:end], "char_start": start, "char_end": end,
                   "choices": list(family.choices), "language": language, "family": family.name}


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_tasks(out_dir, seed, sizes=TASK_SIZES):
    """Write the fine-tuning sets (train, then dev without any training example).

    Returns (paths, held_out): held_out holds the `sentence_key` of every sentiment and tagging dev
    sentence, for the corpus to leave out. A QA dev example is a whole passage, a story of its own random
    stream, which no line of the corpus can be.
    """
    writers = {"sentiment": ("tsv", write_sentiment), "qa": ("json", write_qa), "ner": ("conll", write_ner)}
    paths, held_out = [], set()
    for task, (extension, writer) in writers.items():
        train_size, dev_size = sizes[task]
        train_path, dev_path = out_dir / f"{task}_train.{extension}", out_dir / f"{task}_dev.{extension}"
        extra = {"split": "train"} if task == "qa" else {}
        seen = writer(train_path, _random(seed, f"{task}-train"), train_size, **extra)
        extra = {"split": "dev"} if task == "qa" else {}
        dev = writer(dev_path, _random(seed, f"{task}-dev"), dev_size, exclude=seen, **extra)
        if task != "qa":
            held_out.update(map(sentence_key, dev))
        paths += [train_path, dev_path]
    return paths, frozenset(held_out)


def build_synthetic(out_dir, seed=0, num_documents=DEFAULT_DOCUMENTS, progress=print,
                    probe_per_word=PROBE_ITEMS_PER_WORD, task_sizes=TASK_SIZES):
    """Build the synthetic corpus, probe and fine-tuning sets in `out_dir`; return the corpus path."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    probe_path = out_dir / PROBE_FILE
    with open(probe_path, "w", encoding="utf-8", newline="\n") as file:
        for item in probe_items(seed, probe_per_word):
            file.write(json.dumps(item, ensure_ascii=False) + "\n")
    task_paths, held_out = write_tasks(out_dir, seed, task_sizes)
    paths = [probe_path, *task_paths]
    progress(f"synthetic: wrote {', '.join(path.name for path in paths)}")
    files = {path.name: {"bytes": path.stat().st_size, "sha256": _sha256(path)} for path in paths}
    details = {"seed": seed, "grammar_version": GRAMMAR_VERSION, "num_documents": num_documents,
               "files": files}
    documents = corpus_documents(seed, num_documents, held_out)
    corpus = write_corpus(out_dir, "synthetic", documents, details, progress)
    progress(f"synthetic: done in {time.perf_counter() - started:.1f} s")
    return corpus
