"""Fine-tuning: a pretrained BERT plus one new layer, trained end to end on a labelled task (paper §4).

Start with heads.py (the three heads), then readers.py and batching.py (files in, batches out), the three
task modules (classification.py, question_answering.py, tagging.py), loop.py (the loop) and predict.py
(running the result); the comment below lists every module in reading order.
"""

# Read in this order:
# heads.py               the heads: [CLS] classification, a bi-encoder's pairs, answer spans, token tags
# readers.py             GLUE TSV, SQuAD v1.1 JSON and CoNLL files, with errors that name file and line
#                        (json_location.py finds a line inside a JSON file)
# batching.py            encoded examples padded into batches with Google's feature names
# classification.py      the classification task: sentence (pair) -> label
# squad_features.py      questions and passages as windows, with character offsets and max context
# span_decoding.py       start and end scores -> the answer text
# question_answering.py  the question-answering task
# tagging.py             the tagging task: a label at each word's first piece
# metrics.py             accuracy, F1, Matthews; SQuAD EM and F1; entity precision, recall and F1
# tasks.py               the task names of the command line and their data
# linear_probe.py        a ridge classifier of frozen features, solved in closed form
# probe_start.py         a classifier head started from that probe (LP-FT)
# plateau.py             did it learn? the epochs a small training set needs, and the warning at chance
# loop.py                the fine-tuning loop (its starting weights read by minibert/inspect/model_folder.py)
# report.py              report.html after each epoch: dev metrics, confusion matrix, mistakes
# saved_model.py         the fine-tuned model's folder
# finetuning_run.py      one run from a task name and folders: what the finetune command calls
# predict.py             running a fine-tuned model on new text

from minibert.finetune.heads import (
    IGNORE_INDEX,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.finetune.loop import (
    FineTuneConfig,
    FineTuneResult,
    build_model,
    default_learning_rate,
    fine_tune,
)
from minibert.finetune.metrics import (
    accuracy,
    classification_metrics,
    entities,
    entity_scores,
    f1_score,
    matthews_corrcoef,
    normalize_answer,
    squad_exact_match,
    squad_f1,
    squad_metrics,
)
from minibert.finetune.readers import read_conll, read_squad, read_tsv
from minibert.finetune.saved_model import load_finetuned
from minibert.finetune.span_decoding import best_spans, decode_answers
from minibert.finetune.tasks import TASKS, make_task

__all__ = [
    "IGNORE_INDEX", "TASKS", "BertForQuestionAnswering", "BertForSequenceClassification",
    "BertForTokenClassification", "FineTuneConfig", "FineTuneResult", "accuracy", "best_spans", "build_model",
    "classification_metrics", "decode_answers", "default_learning_rate", "entities", "entity_scores",
    "f1_score", "fine_tune", "load_finetuned", "make_task", "matthews_corrcoef", "normalize_answer",
    "read_conll", "read_squad", "read_tsv", "squad_exact_match", "squad_f1", "squad_metrics",
]
