"""`python -m minibert predict`: run a fine-tuned model (from `finetune --out DIR`) on new text.

    python -m minibert predict --model runs/sentiment "这部电影真好看" "The food was not fresh."
    python -m minibert predict --model runs/rte --pair "A man plays." "A person plays."
    python -m minibert predict --model runs/qa --question "谁在光明公司工作？" --context "陈静在光明公司工作"
    python -m minibert predict --model runs/ner "Leo Brown works at London Museum."
    python -m minibert predict --model runs/ner --file data/synthetic/ner_dev.conll   # metrics on a file
"""

from minibert.cli.arguments import whole_number
from minibert.cli.terminal import printable


def add_arguments(parser):
    parser.add_argument("--model", required=True, metavar="DIR", help="a folder written by `finetune --out`")
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="sentences to classify or tag")
    parser.add_argument("--pair", action="store_true", help="read the texts two at a time as sentence pairs")
    parser.add_argument("--question", help="question answering: the question")
    parser.add_argument("--context", help="question answering: the passage holding the answer")
    parser.add_argument("--file", metavar="FILE", help="a labelled file in the task's format: print metrics")
    parser.add_argument("--top", type=whole_number("the number of answers shown"), default=3,
                        help="question answering: answers shown (3)")


def run(args):
    from minibert.errors import ConfigError
    from minibert.finetune import predict
    from minibert.finetune.saved_model import load_finetuned

    task, model = load_finetuned(args.model)
    if args.file is not None:
        metrics = predict.evaluate_file(task, model, args.file)
        print("  ".join(f"{name} {value:.4f}" for name, value in metrics.items()))
    elif task.kind == "question_answering":
        if not args.question or not args.context:
            raise ConfigError("this is a question-answering model: pass --question and --context")
        answers = predict.answer(task, model, args.question, args.context)
        for rank, found in enumerate(answers[:args.top], start=1):
            print(f"{rank}. {printable(found.text)}  (p={found.probability:.3f}, score {found.score:.2f}, "
                  f"characters {found.char_start}-{found.char_start + len(found.text)})")
        if not answers:
            print("no answer: every likely start or end fell outside the passage")
    elif not args.texts:
        raise ConfigError("give one or more texts to run the model on, or --file FILE")
    elif task.kind == "classification":
        texts = args.texts
        if task.pair_encoder == "bi" and not args.pair:
            raise ConfigError("this model is a bi-encoder: it compares two texts; pass --pair and give the "
                              "texts two at a time, e.g. --pair \"A man plays.\" \"A person plays.\"")
        if args.pair:
            if len(texts) % 2:
                raise ConfigError(f"--pair reads texts two at a time, but {len(texts)} were given")
            texts = list(zip(texts[::2], texts[1::2], strict=True))
        for text, (label, probabilities) in zip(texts, predict.classify(task, model, texts), strict=True):
            shown = "  ".join(f"{name} {p:.3f}" for name, p in probabilities.items())
            text = " / ".join(text) if isinstance(text, tuple) else text
            print(f"{label if isinstance(label, str) else f'{label:.3f}'}\t{shown}\t{printable(text)}")
    else:
        for text in args.texts:
            words, tags, found = predict.tag(task, model, text)
            shown = [printable(word) if tag_ == "O" else f"{printable(word)}/{tag_}"
                     for word, tag_ in zip(words, tags, strict=True)]
            print(" ".join(shown))
            for entity, kind, start, end in found:
                print(f"  {kind}\t{printable(entity)}\t(characters {start}-{end})")
