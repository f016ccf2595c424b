"""Fine-tuning heads: BERT plus one new layer for each kind of task (paper §4 and its Figure 4).

    BertForSequenceClassification  pooled [CLS] -> Dropout -> Linear(H, C)    sentiment, GLUE
    BertForQuestionAnswering       every token -> Linear(H, 2): start, end     SQuAD
    BertForTokenClassification     every token -> Dropout -> Linear(H, C)     named entities
    BertForPairClassification      A and B apart, mean -> Linear(4H, C)       a pair as two sentences

"Fine-tuning" means that every weight learns, the encoder's too; only the head starts from nothing.
Attribute names are HuggingFace's (`classifier`, `qa_outputs`), so the models load both ways.
Legend: B batch, S sequence length, H hidden size, C labels.
"""

# `from_pretrained` loads the encoder from a pretrained model and draws the head fresh with BERT's
# initialiser (normal, std 0.02), unless the folder already holds this head (a fine-tuned model, e.g. for
# `predict`). With HuggingFace's attribute names, a model fine-tuned here loads in transformers' class of
# the same name, and the other way round. The label names travel in the config as HuggingFace keeps them:
# `id2label` and `label2id`.

import numpy as np

from minibert.errors import CheckpointError, DataError, ShapeError
from minibert.inspect.model_folder import read_weights
from minibert.io.checkpoint import ENCODER_PREFIX, stored_dtype
from minibert.model import BertModel
from minibert.model.losses import cross_entropy
from minibert.model.savable import SavableModel
from minibert.model.sentence_vectors import mean_of_tokens, pair_features
from minibert.nn.layers import Dropout, Linear, normal_init

IGNORE_INDEX = -100  # label of a position that has no loss: padding, [CLS], [SEP], a word's later pieces


def label_names(config):
    """The label names of `config` in id order (HF's `id2label`), or None when it has none."""
    id2label = config.extra.get("id2label")
    return None if id2label is None else [id2label[str(i)] for i in range(len(id2label))]


class FineTuningModel(SavableModel):
    """What the three heads share: the encoder under `bert`, label names, and `from_pretrained`."""

    head_name = ""  # the attribute holding the new layer (set by each head)

    def __init__(self, config, num_labels=None, seed=0):
        super().__init__(config)
        self.num_labels = num_labels or len(config.extra.get("id2label") or ()) or 2
        self.rng = np.random.default_rng(seed)  # one generator for init and dropout, as in BertForPreTraining
        self.bert = BertModel(config, rng=self.rng)

    def reinitialize_pooler(self):
        """Draw the pooler afresh (N(0, 0.02), bias 0), as Zhang et al. (2021, "Revisiting Few-sample BERT
        Fine-tuning", §5.2) do: pretraining shaped it for NSP, a question the task does not ask."""
        dense = self.bert.pooler.dense
        dense.weight.data[...] = normal_init(self.rng, dense.weight.shape, self.config.initializer_range)
        dense.bias.data[...] = 0

    @property
    def labels(self):
        """The label names in id order (HF's `id2label`), or None when none were given."""
        return label_names(self.config)

    @staticmethod
    def set_labels(config, labels):
        """Write the label names into `config` (HF's `id2label` / `label2id`), so they are saved with it."""
        config.extra["id2label"] = {str(i): label for i, label in enumerate(labels)}
        config.extra["label2id"] = {label: i for i, label in enumerate(labels)}

    @classmethod
    def from_pretrained(cls, model_dir, num_labels=None, labels=None, seed=0, verbose=True):
        """The encoder of `model_dir` (a model folder or .npz file) with this head on top.

        labels: the label names in id order (they fix num_labels); num_labels alone leaves them unnamed
        (num_labels=1 makes BertForSequenceClassification a regression). The head's weights are loaded
        only when the folder was saved from this class with the same number of labels (a fine-tuned
        model); otherwise it starts fresh, as the paper's heads do.
        """
        config, state, vocab_file = read_weights(model_dir)
        if labels is not None:
            labels = [str(label) for label in labels]
            cls._check_head_labels(config, labels, model_dir)
            if num_labels is not None and num_labels != len(labels):
                raise ShapeError(f"num_labels={num_labels} but {len(labels)} labels were given: {labels}")
            cls.set_labels(config, labels)
            num_labels = len(labels)
        model = cls(config, num_labels, seed)
        model.to(stored_dtype(state))
        model.vocab_file = vocab_file
        loaded_encoder = model._load_encoder(state, model_dir)
        head = getattr(model, cls.head_name)
        head_state = {name.removeprefix(cls.head_name + "."): array for name, array in state.items()
                      if name.startswith(cls.head_name + ".")}
        own = head.state_dict()
        fits = (cls.__name__ in (config.extra.get("architectures") or ()) and set(head_state) == set(own)
                and all(head_state[name].shape == own[name].shape for name in own))
        if fits:
            head.load_state_dict(head_state)
        if verbose:
            how = "loaded" if fits else "new, drawn from N(0, 0.02)"
            print(f"{cls.__name__} ({model.num_parameters():,} parameters): encoder from {model_dir} "
                  f"({loaded_encoder} tensors); head `{cls.head_name}` {how}, {model.num_labels} outputs")
        return model

    @classmethod
    def _check_head_labels(cls, config, labels, model_dir):
        """A folder fine-tuned here holds a head whose outputs mean its labels: a task with other labels
        would read them under the wrong names. HuggingFace's unnamed defaults (LABEL_0, ...) name nothing."""
        built_for = cls.__name__ in (config.extra.get("architectures") or ()) and label_names(config)
        if not built_for or built_for == [f"LABEL_{i}" for i in range(len(built_for))] or built_for == labels:
            return
        others = [label for label in labels if label not in built_for] or labels
        raise DataError(f"the task's labels {others} are not those the head of {model_dir} was built for "
                        f"({built_for}); fine-tune it on a file with those labels, or start from the "
                        "pretrained model it came from for a new label set")

    def _load_encoder(self, state, model_dir):
        encoder = {name.removeprefix(ENCODER_PREFIX): array for name, array in state.items()
                   if name.startswith(ENCODER_PREFIX)}
        own = self.bert.state_dict()
        # HF's QA and tagging models have no pooler (they never read it), so it may be absent; they do not
        # use it either. Anything else missing means the file is not a BERT encoder.
        missing = [name for name in own if name not in encoder and not name.startswith("pooler.")]
        if missing:
            shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
            raise CheckpointError(f"{model_dir} lacks {len(missing)} encoder weights ({shown}); is it a BERT "
                                  "checkpoint?")
        loaded = {name: array for name, array in encoder.items() if name in own}
        self.bert.load_state_dict(loaded, strict=False)
        return len(loaded)


class BertForSequenceClassification(FineTuningModel):
    """logits = Linear(Dropout(pooled [CLS])): one score per label (Google run_classifier.py
    `create_model`). With num_labels=1 the single output is a number and the loss is the squared error
    (STS-B's similarity score).

    `config.extra["classifier_pooling"] = "mean"` reads the mean of the real tokens' final vectors instead
    of the pooler's [CLS] (Sentence-BERT's pooling, Reimers and Gurevych 2019): the pooler was trained for
    NSP only. HuggingFace's class has no such setting: it would read such a model's [CLS].
    """

    head_name = "classifier"

    def __init__(self, config, num_labels=None, seed=0):
        super().__init__(config, num_labels, seed)
        self.dropout = Dropout(config.hidden_dropout_prob, self.rng)
        self.classifier = Linear(config.hidden_size, self.num_labels, self.rng, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """Returns the logits (B, C)."""
        return self.classifier(self.dropout(self.head_inputs(input_ids, token_type_ids, attention_mask)))

    def head_inputs(self, input_ids, token_type_ids=None, attention_mask=None):
        """What the classifier reads, (B, H): the pooled [CLS], or the mean of the real tokens."""
        output = self.bert(input_ids, token_type_ids, attention_mask)
        if self.config.extra.get("classifier_pooling", "cls") == "mean":
            return mean_of_tokens(output.sequence_output, attention_mask)
        return output.pooled_output

    def loss(self, logits, labels):
        """Mean cross-entropy over the batch, or mean squared error when num_labels=1."""
        labels = np.asarray(labels)
        if self.num_labels == 1:
            error = logits.reshape(-1) - labels.astype(logits.dtype)  # (B,)
            return (error * error).mean()
        return cross_entropy(logits, labels)


class BertForPairClassification(FineTuningModel):
    """A bi-encoder (Sentence-BERT, Reimers and Gurevych 2019, §3): A and B are read apart, as two sentences,
    and only their vectors meet.

        u = mean(BERT([CLS] A [SEP]))    v = mean(BERT([CLS] B [SEP]))
        logits = Linear([u, v, |u - v|, u * v])                         4H -> C

    BERT's own way with a pair (BertForSequenceClassification) is a cross-encoder: `[CLS] A [SEP] B [SEP]`,
    every token of A attending to every token of B. A bi-encoder gives that up for one sentence vector per
    text, which is what sentence-embedding models such as all-MiniLM-L6-v2 were trained to give: fine-tuned
    this way they start from what they know. Why |u - v| and u * v: see `pair_features`. No dropout on the
    features, as in SBERT's classification objective. No such class exists in HuggingFace.
    """

    head_name = "classifier"

    def __init__(self, config, num_labels=None, seed=0):
        super().__init__(config, num_labels, seed)
        self.classifier = Linear(4 * config.hidden_size, self.num_labels, self.rng, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """input_ids, token_type_ids, attention_mask: (2, B, S), the A texts then the B texts, padded to one
        length. Returns the logits (B, C)."""
        return self.classifier(self.head_inputs(input_ids, token_type_ids, attention_mask))

    def head_inputs(self, input_ids, token_type_ids=None, attention_mask=None):
        """What the classifier reads, (B, 4H): [u, v, |u - v|, u * v]."""
        if np.ndim(input_ids) != 3 or len(input_ids) != 2:
            raise ShapeError(f"BertForPairClassification reads (2, B, S) inputs, A's then B's; got "
                             f"{np.shape(input_ids)}")
        _, batch, length = np.shape(input_ids)
        flat = [None if array is None else np.reshape(array, (2 * batch, length))
                for array in (input_ids, token_type_ids, attention_mask)]
        sequence = self.bert(*flat).sequence_output  # (2B, S, H): A and B in one pass, each alone
        vectors = mean_of_tokens(sequence, flat[2])  # (2B, H)
        u, v = vectors[:batch], vectors[batch:]  # (B, H) each
        return pair_features(u, v)

    def loss(self, logits, labels):
        """Mean cross-entropy over the batch."""
        return cross_entropy(logits, np.asarray(labels))


class BertForQuestionAnswering(FineTuningModel):
    """Every token gets a start score and an end score: Linear(H, 2) (Google run_squad.py `create_model`).

    The answer is the span whose start and end score highest together (`span_decoding.py`). Google's head
    has no dropout of its own, and neither has this one.
    """

    head_name = "qa_outputs"

    def __init__(self, config, num_labels=None, seed=0):
        super().__init__(config, 2, seed)  # always two outputs: start and end
        self.qa_outputs = Linear(config.hidden_size, 2, self.rng, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """Returns (start_logits, end_logits), each (B, S)."""
        sequence = self.bert(input_ids, token_type_ids, attention_mask).sequence_output  # (B, S, H)
        logits = self.qa_outputs(sequence)  # (B, S, 2)
        return logits[:, :, 0], logits[:, :, 1]

    def loss(self, start_logits, end_logits, start_positions, end_positions):
        """(CE(start) + CE(end)) / 2, each over the S positions of the sequence (run_squad.py)."""
        start = cross_entropy(start_logits, np.asarray(start_positions))
        end = cross_entropy(end_logits, np.asarray(end_positions))
        return (start + end) * 0.5


class BertForTokenClassification(FineTuningModel):
    """One label per token: Linear(Dropout(h_i)) at every position.

    Only the first WordPiece of each word carries the word's label; the other pieces, padding, [CLS] and
    [SEP] carry IGNORE_INDEX and add nothing to the loss (the BERT paper, §5.3: "we use the representation
    of the first sub-token as the input to the token-level classifier").
    """

    head_name = "classifier"

    def __init__(self, config, num_labels=None, seed=0):
        super().__init__(config, num_labels, seed)
        self.dropout = Dropout(config.hidden_dropout_prob, self.rng)
        self.classifier = Linear(config.hidden_size, self.num_labels, self.rng, config.initializer_range)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """Returns the logits (B, S, C)."""
        sequence = self.bert(input_ids, token_type_ids, attention_mask).sequence_output  # (B, S, H)
        return self.classifier(self.dropout(sequence))  # (B, S, C)

    def loss(self, logits, label_ids):
        """Mean cross-entropy over the positions whose label is not IGNORE_INDEX."""
        return cross_entropy(logits, np.asarray(label_ids), ignore_index=IGNORE_INDEX)
