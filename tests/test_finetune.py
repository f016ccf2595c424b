"""Fine-tuning end to end (minibert/finetune/loop.py, run.py, the finetune and predict commands): a `tiny`
model learns the synthetic sentiment task, and the saved model predicts."""

import json

import numpy as np
import pytest

from minibert.cli import main
from minibert.errors import ConfigError, DataError
from minibert.finetune import FineTuneConfig, load_finetuned
from minibert.finetune.finetuning_run import run_finetuning
from minibert.finetune.predict import answer, classify, tag
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import train_wordpiece
from minibert.train.logs import read_log

SYNTHETIC = "data/synthetic"


# Every fine-tuning here runs on one thread (FineTuneConfig(threads=1), --threads 1): at `tiny` sizes a matrix
# product is too small to share, and starting the BLAS and Numba threads costs more than the work, far more when
# other processes share the cores (the sentiment test took 13 s on one thread and 5.6 min on two busy cores).


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """A from_pretrained folder of a random `tiny` BertModel with a vocabulary of the synthetic task files."""
    folder = tmp_path_factory.mktemp("tiny")
    files = [f"{SYNTHETIC}/sentiment_train.tsv", f"{SYNTHETIC}/ner_train.conll", f"{SYNTHETIC}/qa_train.json"]
    tokens = train_wordpiece(files, 2000, out=folder / "vocab.txt")  # 2,000, the cap: no [UNK] in the sets
    BertModel(BertConfig.preset("tiny", vocab_size=len(tokens))).save_pretrained(folder)
    return folder


def test_tiny_learns_synthetic_sentiment(tiny_folder, tmp_path):
    """From random weights, `tiny` reaches at least 90% dev accuracy on the bilingual sentiment set in 6
    epochs at lr 1e-3 (measured: 98.6-99.6% over four seeds, 8-13 s on one core). The labels hinge on
    negation and contrast (`这首歌不难听` is positive), so no single word gives them away: above 90% means
    the model composes words, and chance is 50%."""
    settings = FineTuneConfig(learning_rate=1e-3, epochs=6, batch_size=32, seed=1, threads=1)
    task, model, result = run_finetuning("sentiment", tiny_folder, tmp_path / "out", settings=settings,
                                         random_init=True, log=None)
    assert result.best_metrics["accuracy"] >= 0.9, result.history
    record = json.loads((tmp_path / "out" / "finetune.json").read_text())
    assert record["best_epoch"] == result.best_epoch and len(record["history"]) == 6
    loaded_task, loaded = load_finetuned(tmp_path / "out")
    texts = ["这部电影真好看", "这部电影一点也不好看"]
    # the trained model ran accelerated (minibert/fast), the loaded one runs the core: equal to float32 rounding
    for (label, scores), (trained_label, trained_scores) in zip(classify(loaded_task, loaded, texts),
                                                                classify(task, model.eval(), texts), strict=True):
        assert label == trained_label and scores == pytest.approx(trained_scores, abs=1e-5)
    assert [label for label, _ in classify(loaded_task, loaded, texts)] == ["positive", "negative"]


def test_finetune_and_predict_commands_for_tagging_and_qa(tiny_folder, tmp_path, capsys):
    """The commands run end to end on small files: one epoch each, the model folder is complete, and
    predict prints tags, answers and metrics. (A smoke test of the plumbing; learning is tested above.)"""
    ner_train, ner_dev = tmp_path / "train.conll", tmp_path / "dev.conll"
    sentences = open(f"{SYNTHETIC}/ner_train.conll", encoding="utf-8").read().split("\n\n")
    ner_train.write_text("\n\n".join(sentences[:64]) + "\n", encoding="utf-8")
    ner_dev.write_text("\n\n".join(sentences[64:96]) + "\n", encoding="utf-8")
    for again in ([], ["--overwrite"]):  # the second run into the same folder replaces the first one's log
        with pytest.raises(SystemExit) as status:
            main(["finetune", "--task", "conll", "--model", str(tiny_folder), "--out", str(tmp_path / "ner"),
                  "--train", str(ner_train), "--dev", str(ner_dev), "--epochs", "1", "--lr", "1e-3", "--threads", "1",
                  *again])
        assert status.value.code == 0
    assert {"config.json", "model.safetensors", "vocab.txt", "finetune.json", "log.jsonl"} <= {
        path.name for path in (tmp_path / "ner").iterdir()}
    assert [record["kind"] for record in read_log(tmp_path / "ner" / "log.jsonl")].count("eval") == 1
    with pytest.raises(SystemExit):
        main(["predict", "--model", str(tmp_path / "ner"), "Leo Brown works at London Museum."])
    shown = capsys.readouterr().out
    assert shown.startswith("speed layer on") and "Leo" in shown  # the command says how it trains, first
    task, model = load_finetuned(tmp_path / "ner")
    words, tags, _ = tag(task, model, "Leo Brown works at London Museum.")
    assert words == ["Leo", "Brown", "works", "at", "London", "Museum", "."] and len(tags) == 7

    qa = json.load(open(f"{SYNTHETIC}/qa_train.json", encoding="utf-8"))
    qa["data"] = qa["data"][:8]
    (tmp_path / "qa.json").write_text(json.dumps(qa, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SystemExit) as status:
        main(["finetune", "--task", "squad", "--model", str(tiny_folder), "--out", str(tmp_path / "qa"),
              "--train", str(tmp_path / "qa.json"), "--dev", str(tmp_path / "qa.json"), "--epochs", "1",
              "--max-seq-length", "64", "--doc-stride", "32", "--threads", "1"])
    assert status.value.code == 0
    task, model = load_finetuned(tmp_path / "qa")
    assert (task.max_seq_length, task.doc_stride) == (64, 32)
    context = qa["data"][0]["paragraphs"][0]["context"]
    answers = answer(task, model, "谁在光明公司工作？", context)
    assert answers and all(found.text == context[found.char_start:found.char_start + len(found.text)]
                           for found in answers)
    assert np.isclose(sum(found.probability for found in answers), 1.0)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["predict", "--model", str(tmp_path / "qa"), "--file", str(tmp_path / "qa.json")])
    assert "exact_match" in capsys.readouterr().out


@pytest.mark.parametrize("changes", [{"epochs": 0}, {"batch_size": 2.5}, {"warmup_proportion": 1.5},
                                     {"learning_rate": -1e-3}, {"threads": 0}, {"threads": "2"}])
def test_fine_tune_settings_refuse_bad_values(changes):
    """Each bad setting is refused with a ConfigError that names it, before any model is built."""
    name = next(iter(changes))
    with pytest.raises(ConfigError, match=name):
        FineTuneConfig(**changes)


def same_text_pairs(path, count, seed):
    """`count` pairs of synthetic sentences: half are a sentence and itself (`same`), half two sentences."""
    sentences = [line.split("\t")[0] for line in open(f"{SYNTHETIC}/sentiment_train.tsv", encoding="utf-8")][1:]
    rng = np.random.default_rng(seed)
    rows = ["sentence1\tsentence2\tlabel"]
    for _ in range(count):
        a, b = rng.choice(sentences, size=2, replace=False)
        b = a if rng.random() < 0.5 else b
        rows.append(f"{a}\t{b}\t{'same' if a == b else 'different'}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_bi_encoder_compares_its_two_sentence_vectors(tiny_folder, tmp_path, capsys):
    """--pair-encoder bi reads A and B apart and classifies [u, v, |u - v|, u * v]: "is B the same text as
    A?" is then |u - v| = 0, which random `tiny` weights learn in 30 steps (measured: 86.5% after 3 epochs
    of 300 pairs, where the cross-encoder stays at chance). The saved model is rebuilt as a bi-encoder by
    predict, and answers as the trained one does."""
    train, dev = same_text_pairs(tmp_path / "train.tsv", 300, 0), same_text_pairs(tmp_path / "dev.tsv", 200, 1)
    with pytest.raises(SystemExit) as status:
        main(["finetune", "--task", "glue-tsv", "--model", str(tiny_folder), "--out", str(tmp_path / "bi"),
              "--train", str(train), "--dev", str(dev), "--epochs", "3", "--lr", "1e-3", "--threads", "1",
              "--random-init", "--pair-encoder", "bi", "--seed", "1"])
    assert status.value.code == 0
    # the dev score chose the epoch: the command says so, and how to score the model on held-out data
    said = capsys.readouterr().out
    assert "best of 3 looks and leans high" in said and f"predict --model {tmp_path / 'bi'} --file TEST" in said
    record = json.loads((tmp_path / "bi" / "finetune.json").read_text())
    assert record["best"]["accuracy"] >= 0.75, record["history"]
    task, model = load_finetuned(tmp_path / "bi")
    assert task.pair_encoder == "bi" and type(model).__name__ == "BertForPairClassification"
    sentence = "这部电影真好看。"
    answers = classify(task, model, [(sentence, sentence), (sentence, "这本书一点也不精彩！")])
    assert [label for label, _ in answers] == ["same", "different"]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["predict", "--model", str(tmp_path / "bi"), "--file", str(dev)])
    assert f"accuracy {record['best']['accuracy']:.4f}" in capsys.readouterr().out


def test_predict_asks_a_bi_encoder_for_pairs(tiny_folder, tmp_path, capsys):
    """`predict` on a bi-encoder without --pair says to pass --pair (not a `finetune` option) in one line,
    and with --pair it answers; a file of single texts is refused naming the file. The folder is untouched."""
    from minibert.finetune.classification import ClassificationTask
    from minibert.finetune.saved_model import save_finetuned
    from minibert.tokenizer import BertTokenizer

    task = ClassificationTask(BertTokenizer.from_pretrained(tiny_folder), labels=["same", "different"],
                              pair_encoder="bi")
    model = task.head.from_pretrained(tiny_folder, **task.head_options(), verbose=False)
    save_finetuned(tmp_path / "bi", model, task, {"task": "glue-tsv"})
    before = {path.name: path.read_bytes() for path in (tmp_path / "bi").iterdir()}
    singles = tmp_path / "singles.tsv"
    singles.write_text("sentence\tlabel\n这部电影真好看。\tsame\n", encoding="utf-8")
    for arguments, expected in [(["这部电影真好看。", "这本书一点也不精彩！"], "; pass --pair and give the texts two"),
                                (["--file", singles], f"{singles}:2: has one text")]:
        with pytest.raises(SystemExit) as status:
            main(["predict", "--model", str(tmp_path / "bi"), *map(str, arguments)])
        error = capsys.readouterr().err
        assert status.value.code == 2 and error.startswith("error: ") and expected in error, error
        assert error.count("\n") == 1
        assert "--pair-encoder" not in error or "give a file of pairs (to fine-tune on single texts" in error
    with pytest.raises(SystemExit) as status:
        main(["predict", "--model", str(tmp_path / "bi"), "--pair", "这部电影真好看。", "这部电影真好看。"])
    assert status.value.code == 0 and capsys.readouterr().out.split("\t")[0] in ("same", "different")
    assert {path.name: path.read_bytes() for path in (tmp_path / "bi").iterdir()} == before


def test_a_bi_encoder_needs_pairs(tiny_folder, tmp_path, capsys):
    """A file of single sentences, a task that is not a classification, or a regression is refused in one
    line, before any training."""
    with pytest.raises(DataError, match="has one text, but a bi-encoder"):
        run_finetuning("sentiment", tiny_folder, settings=FineTuneConfig(threads=1), random_init=True,
                       task_options={"pair_encoder": "bi"}, log=None, train_limit=8, dev_limit=8)
    with pytest.raises(SystemExit) as status:
        main(["finetune", "--task", "conll", "--model", str(tiny_folder), "--out", str(tmp_path / "x"),
              "--pair-encoder", "bi"])
    assert status.value.code == 2 and "--pair-encoder is for classification" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="regression"):
        run_finetuning("glue-tsv", tiny_folder, train="x", dev="y", task_options={"pair_encoder": "bi",
                                                                              "regression": True}, log=None)


def test_the_head_started_from_the_probe_begins_where_the_probe_is(tiny_folder, tmp_path, capsys):
    """--head-init probe: on "is B the same text as A?", the probe of random `tiny` vectors already reads
    |u - v| = 0, so the first epoch ends above where the random head ends its third (measured: 94.0% against
    86.5% for the test above)."""
    train, dev = same_text_pairs(tmp_path / "train.tsv", 300, 0), same_text_pairs(tmp_path / "dev.tsv", 200, 1)
    with pytest.raises(SystemExit) as status:
        main(["finetune", "--task", "glue-tsv", "--model", str(tiny_folder), "--out", str(tmp_path / "lpft"),
              "--train", str(train), "--dev", str(dev), "--epochs", "1", "--lr", "1e-3", "--threads", "1",
              "--random-init", "--pair-encoder", "bi", "--head-init", "probe", "--seed", "1"])
    assert status.value.code == 0
    shown = capsys.readouterr()
    assert "head: the linear probe of the frozen encoder's inputs to it" in shown.out + shown.err
    record = json.loads((tmp_path / "lpft" / "finetune.json").read_text())
    assert record["settings"]["head_init"] == "probe" and record["best"]["accuracy"] >= 0.9, record["history"]
