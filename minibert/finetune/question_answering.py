"""The question-answering task: find the answer to a question as a span of its passage (SQuAD v1.1).

    [CLS] 谁 在 光 明 公 司 工 作 ？ [SEP] 陈 静 和 徐 亮 是 好 朋 友 。 … [SEP]
                                          ^start ^end

Each question becomes one or more windows (`squad_features.py`); `BertForQuestionAnswering` scores every
token as a start and as an end; `span_decoding.py` turns the scores of all windows into the answer text;
`metrics.squad_metrics` scores it against the gold answers (EM and F1, in percent).
"""

# Defaults are run_squad.py's: max_seq_length 384, doc_stride 128, max_query_length 64, n_best_size 20,
# max_answer_length 30 (max_seq_length is lowered to the model's max_position_embeddings when larger).

import numpy as np

from minibert.finetune.batching import encoder_inputs, shortest_first
from minibert.finetune.heads import BertForQuestionAnswering
from minibert.finetune.metrics import squad_metrics
from minibert.finetune.readers import read_squad
from minibert.finetune.span_decoding import decode_answers
from minibert.finetune.squad_features import check_doc_stride, question_windows


class QuestionAnsweringTask:
    kind = "question_answering"
    head = BertForQuestionAnswering
    main_metric = "f1"

    def __init__(self, tokenizer, max_seq_length=384, doc_stride=128, max_query_length=64, n_best_size=20,
                 max_answer_length=30):
        check_doc_stride(doc_stride)  # before reading any data: a stride of 0 would never end
        self.tokenizer, self.max_seq_length, self.doc_stride = tokenizer, max_seq_length, doc_stride
        self.max_query_length, self.n_best_size = max_query_length, n_best_size
        self.max_answer_length = max_answer_length
        self.labels = None  # start and end are the outputs; there are no label names

    def state(self):
        return {"max_seq_length": self.max_seq_length, "doc_stride": self.doc_stride,
                "max_query_length": self.max_query_length, "n_best_size": self.n_best_size,
                "max_answer_length": self.max_answer_length}

    def head_options(self):
        return {}

    def read(self, path, labelled=True):
        return read_squad(path)

    def fit_labels(self, train_examples):
        """Nothing to learn from the training set: the outputs are always start and end."""

    def encode(self, examples, training=False):
        """The windows of every question; training windows carry the answer's token positions."""
        windows = []
        for index, example in enumerate(examples):
            windows += question_windows(example, index, self.tokenizer, self.max_seq_length, self.doc_stride,
                                        self.max_query_length, with_answer=training)
        return windows

    def batch(self, windows):
        batch = encoder_inputs([w.input_ids for w in windows], [w.segment_ids for w in windows],
                               self.tokenizer.pad_token_id)
        batch["start_positions"] = np.array([w.start_position for w in windows], dtype=np.int64)
        batch["end_positions"] = np.array([w.end_position for w in windows], dtype=np.int64)
        return batch

    def loss(self, model, batch):
        start_logits, end_logits = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"])
        return model.loss(start_logits, end_logits, batch["start_positions"], batch["end_positions"])

    @staticmethod
    def length(window):
        return len(window.input_ids)

    def answers(self, model, examples, windows, batch_size=64):
        """The n-best `Answer`s of every example, best first (an empty list when no span was valid)."""
        start_logits, end_logits = [None] * len(windows), [None] * len(windows)
        for indexes, (starts, ends) in shortest_first(model, windows, self.batch, self.length, batch_size):
            for row, index in enumerate(indexes):
                start_logits[index] = starts.data[row, :self.length(windows[index])]  # (S,) of this window
                end_logits[index] = ends.data[row, :self.length(windows[index])]
        by_example = [[] for _ in examples]
        for index, window in enumerate(windows):
            by_example[window.example_index].append(index)
        return [decode_answers([windows[i] for i in indexes], [start_logits[i] for i in indexes],
                               [end_logits[i] for i in indexes], example.context, self.n_best_size,
                               self.max_answer_length)
                for example, indexes in zip(examples, by_example, strict=True)]

    def chance(self, examples):
        """None: no fixed guess scores a span task, so only a flat training loss says it learned nothing."""
        return None

    def evaluate(self, model, examples, windows, batch_size=64):
        answers = self.answers(model, examples, windows, batch_size)
        predictions = {example.question_id: best[0].text if best else ""
                       for example, best in zip(examples, answers, strict=True)}
        golds = {example.question_id: [text for text, _ in example.answers] for example in examples}
        return squad_metrics(predictions, golds)
