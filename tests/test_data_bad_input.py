"""The data builder (`build_pretraining_data`, the `data` command) on bad and strange corpora.

test_data_build.py covers the empty file, the missing break between documents and the missing file; here
are the files a student actually has: Windows line ends, a byte-order mark, NUL bytes, a sentence of a
million words, text of invisible characters only, bytes that are not UTF-8, and a folder's leftovers from
an earlier, broken build."""

import warnings

import pytest

from minibert.data.build import build_pretraining_data
from minibert.data.shards import read_manifest
from minibert.errors import DataError, TokenizerError

GOOD = "the cat sat on the mat .\nthe dog ran in the park .\n\na bird sang on a tree .\nthe sun rose .\n"


def build(tmp_path, content, name="corpus.txt", **options):
    """Write `content` as the corpus in a fresh folder and build it (a small vocabulary, short sequences)."""
    folder = tmp_path / name.replace(".", "_")
    folder.mkdir()
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few documents to hold some out: expected with 2 documents
        return build_pretraining_data(path, vocab_size=80, max_seq_length=32, log=lambda message: None,
                                      **options)


def train_rows(shard_dir):
    return read_manifest(shard_dir)["splits"]["train"]["rows"]


@pytest.mark.parametrize("content", [
    GOOD.replace("\n", "\r\n").encode(),  # Windows line ends
    b"\xef\xbb\xbf" + GOOD.encode(),  # a byte-order mark
    GOOD.replace("cat", "c\x00at").encode(),  # NUL bytes, dropped by the tokenizer's cleaning
    GOOD.replace("\n\n", "\n \t \n"),  # a "blank" line holding spaces and a tab
], ids=["CRLF", "BOM", "NUL", "whitespace line"])
def test_ordinary_mess_builds_like_the_clean_file(tmp_path, content):
    """Windows line ends, a byte-order mark, NUL bytes and whitespace-only separator lines give the same
    number of documents and instances as the clean corpus."""
    clean = read_manifest(build(tmp_path, GOOD, name="clean.txt"))["splits"]["train"]
    messy = read_manifest(build(tmp_path, content))["splits"]["train"]
    assert (messy["documents"], messy["rows"]) == (clean["documents"], clean["rows"])


def test_a_sentence_of_a_million_words_is_truncated_not_fatal(tmp_path):
    """One line of 10^6 words (a corpus without sentence breaks) builds: the sentence is cut to fit one
    instance, with a warning naming the file, and memory stays proportionate (the run finishes quickly)."""
    content = "w " * 1_000_000 + "\n" + GOOD
    with pytest.warns(UserWarning, match="longer than 29 tokens"):
        shard_dir = build_pretraining_data(_write(tmp_path, content), vocab_size=80, max_seq_length=32,
                                           eval_fraction=0.0, log=lambda message: None)
    assert train_rows(shard_dir) >= 2


def _write(tmp_path, content):
    path = tmp_path / "corpus.txt"
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("content, error, named", [
    ("\u200b\u200b\n\u200d\n\n\ufeff\n\u202e\n", TokenizerError, "no words to learn from"),
    ("   \n\t\n\n\n", DataError, "is empty"),
    ("caf\xe9 .\nun .\n\ndeux .\ntrois .\n".encode("latin-1"), DataError, r"corpus.txt:1: not UTF-8"),
    ("a \ud800 b .\nc .\n\nd .\ne .\n".encode("utf-8", "surrogatepass"), DataError, "not UTF-8"),
], ids=["invisible characters only", "whitespace only", "Latin-1", "encoded surrogate"])
def test_corpora_without_usable_text_are_refused(tmp_path, content, error, named):
    """A corpus of invisible characters, of whitespace, or of bytes that are not UTF-8 stops with an error
    naming the problem (file and line for bad bytes), and leaves no vocab.txt behind that a later build
    would silently reuse."""
    with pytest.raises(error, match=named):
        build(tmp_path, content)
    assert not list(tmp_path.rglob("vocab.txt"))


def test_a_folder_is_not_a_corpus(tmp_path):
    """A folder given as the corpus is refused, naming it."""
    with pytest.raises(DataError, match="neither .* nor an existing file"):
        build_pretraining_data(tmp_path, log=lambda message: None)


def test_leftovers_of_a_broken_build_are_rebuilt_or_named(tmp_path):
    """A damaged manifest from an earlier build is rebuilt rather than trusted; a damaged vocab.txt left in
    the folder is named, with the fix (delete it)."""
    shard_dir = build(tmp_path, GOOD)
    (shard_dir / "manifest.json").write_text("{broken")
    rebuilt = build_pretraining_data(shard_dir.parent.parent / "corpus.txt", vocab_size=80, max_seq_length=32,
                                     eval_fraction=0.0, log=lambda message: None)
    assert train_rows(rebuilt) > 0
    (shard_dir.parent.parent / "vocab.txt").write_bytes(b"\xff\xfe not a vocabulary")
    with pytest.raises(TokenizerError, match="vocab.txt.*not UTF-8"):
        build_pretraining_data(shard_dir.parent.parent / "corpus.txt", force=True, log=lambda message: None)
