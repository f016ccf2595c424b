"""The tagging task: one BIO label per word (named entities), read at each word's first WordPiece.

    words    Leo      Brown     works  at  London   Museum
    pieces   leo      brown     works  at  london   museum     (a long word: play ##ing)
    tags     B-PER    I-PER     O      O   B-ORG    I-ORG
    labels   B-PER    I-PER     O      O   B-ORG    I-ORG      (##ing, [CLS], [SEP]: IGNORE_INDEX)

The predicted tag of a word is the label with the highest score at its first piece; entity precision,
recall and F1 are then counted over whole entities (`metrics.entity_scores`).
"""

# Chinese sets tag single characters (小 B-PER, 明 I-PER), which BERT reads one at a time anyway. Words
# beyond max_seq_length do not fit and are predicted O (they still count as gold entities), and a warning
# says how many there were.

from minibert.data.problems import warn
from minibert.finetune.batching import encoder_inputs, pad, shortest_first
from minibert.finetune.heads import IGNORE_INDEX, BertForTokenClassification
from minibert.finetune.metrics import entity_scores
from minibert.finetune.readers import check_labels, read_conll, tag_set
from minibert.finetune.squad_features import whole_word_spans, wordpieces_with_offsets


class TaggingTask:
    kind = "tagging"
    head = BertForTokenClassification
    main_metric = "f1"

    def __init__(self, tokenizer, max_seq_length=128, labels=None):
        self.tokenizer, self.max_seq_length, self.labels = tokenizer, max_seq_length, labels

    def state(self):
        return {"max_seq_length": self.max_seq_length, "labels": self.labels}

    def head_options(self):
        return {"labels": self.labels}

    def read(self, path, labelled=True):
        return read_conll(path, tagged=labelled)

    def fit_labels(self, train_examples):
        self.labels = tag_set(train_examples)

    def encode(self, sentences, training=False):
        """One feature per sentence: ids, and the position of each word's first piece (-1: did not fit)."""
        if sentences[0].tags is not None:
            check_labels(sentences, self.labels)
        features, cut = [], []
        for sentence in sentences:
            feature = self.encode_words(sentence.words, sentence.tags)
            if -1 in feature["word_positions"]:
                cut.append(sentence.source)
            features.append(feature)
        if cut:
            warn(f"{cut[0]}: {len(cut)} sentences do not fit in max_seq_length={self.max_seq_length}; "
                 "their last words are predicted O (raise max_seq_length to read them whole)")
        return features

    def encode_words(self, words, tags=None):
        tokenizer = self.tokenizer
        input_ids, label_ids, word_positions = [tokenizer.cls_token_id], [IGNORE_INDEX], []
        full = False
        for index, word in enumerate(words):
            piece_ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))
            full = full or len(input_ids) + len(piece_ids) > self.max_seq_length - 1  # room for [SEP]
            if full or not piece_ids:  # a word of control characters only has no piece to read
                word_positions.append(-1)
                continue
            word_positions.append(len(input_ids))
            first_label = IGNORE_INDEX if tags is None else self.labels.index(tags[index])
            label_ids += [first_label] + [IGNORE_INDEX] * (len(piece_ids) - 1)
            input_ids += piece_ids
        input_ids.append(tokenizer.sep_token_id)
        label_ids.append(IGNORE_INDEX)
        return {"input_ids": input_ids, "label_ids": label_ids, "word_positions": word_positions,
                "tags": tags}

    def batch(self, features):
        input_ids = [f["input_ids"] for f in features]
        batch = encoder_inputs(input_ids, [[0] * len(ids) for ids in input_ids], self.tokenizer.pad_token_id)
        batch["label_ids"] = pad([f["label_ids"] for f in features], IGNORE_INDEX)
        return batch

    def loss(self, model, batch):
        logits = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"])  # (B, S, C)
        return model.loss(logits, batch["label_ids"])

    @staticmethod
    def length(feature):
        return len(feature["input_ids"])

    def predict_tags(self, model, features, batch_size=64):
        """The predicted tag of every word of every feature (O for words that did not fit)."""
        predictions = [None] * len(features)
        for indexes, logits in shortest_first(model, features, self.batch, self.length, batch_size):
            best = logits.data.argmax(axis=-1)  # (B, S)
            for row, index in enumerate(indexes):
                predictions[index] = [self.labels[best[row, p]] if p >= 0 else "O"
                                      for p in features[index]["word_positions"]]
        return predictions

    def chance(self, sentences):
        """(score, what scores it) for a model that learned nothing: it tags every word O."""
        return 0.0, "tagging every word O"

    def evaluate(self, model, sentences, features, batch_size=64):
        return entity_scores([s.tags for s in sentences], self.predict_tags(model, features, batch_size))

    def split_words(self, text):
        """Raw text -> (words as written, their (start, end) in `text`), for tagging new text. A word is a
        first piece with its ## pieces: a CJK character, a punctuation mark, or a run of letters."""
        spans = list(dict.fromkeys(whole_word_spans(*wordpieces_with_offsets(self.tokenizer, text))))
        return [text[start:end] for start, end in spans], spans

