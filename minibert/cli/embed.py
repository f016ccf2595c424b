"""`python -m minibert embed --model DIR "text" ...`: sentence embeddings and how similar the texts are.

    python -m minibert embed --model all-MiniLM-L6-v2 "A man is playing a guitar." \
        "Someone plays an instrument." "The stock market fell sharply today."

DIR is a sentence-transformers folder (modules.json, 1_Pooling/config.json: its pooling and normalisation
are used) or any from_pretrained folder (mean pooling). Prints the embeddings' shape and the matrix of
cosine similarities, 1 for the same meaning, near 0 for unrelated texts.
"""


def add_arguments(parser):
    parser.add_argument("--model", required=True, metavar="DIR", help="sentence-transformers or BERT folder")
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="the texts to embed and compare")


def run(args):
    from minibert.cli.terminal import printable
    from minibert.inspect.sentence_encoder import SentenceEncoder, cosine_similarity, similarity_table

    encoder = SentenceEncoder.from_pretrained(args.model)
    vectors = encoder.encode(args.texts)
    layout = encoder.layout
    how = " + ".join(layout.pooling) + " pooling" + (", normalised to length 1" if layout.normalize else "")
    print(f"embeddings: {vectors.shape[0]} texts x {vectors.shape[1]} numbers ({how}; "
          f"texts cut at {encoder.max_length} tokens)")
    print("cosine similarity:")
    print(similarity_table([printable(text) for text in args.texts], cosine_similarity(vectors)))
