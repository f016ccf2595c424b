"""The JSON files of a model folder, edited by hand: a field of the wrong type is refused with one line that
names the file, the field and the value (minibert/io/json_fields.py), never a bare TypeError and never a
silent misreading such as `"do_lower_case": "no"` read as true; and a fuzz test over every such file.

Two tiny folders: "plain" (vocab.txt, tokenizer_config.json) and "hf" (tokenizer.json alone, as
all-MiniLM-L6-v2 ships), each with config.json, model.safetensors and a sentence-transformers layout.
"""

import json
import random
import shutil

import pytest
from helpers import write_layout, write_tokenizer_json

from minibert import BertConfig, BertModel, BertTokenizer
from minibert.cli import main
from minibert.errors import MinibertError
from minibert.inspect.sentence_encoder import SentenceEncoder

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "man", "plays", "guitar", "hi"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("model_folders")
    config = BertConfig(vocab_size=len(TOKENS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=24)
    for kind in ("plain", "hf"):
        BertModel(config, seed=3).save_pretrained(base / kind)
        write_layout(base / kind, settings={"max_seq_length": 20, "do_lower_case": False})
    BertTokenizer.from_vocab_list(TOKENS).save_pretrained(base / "plain")
    write_tokenizer_json(base / "hf", TOKENS)
    return base


def edited_copy(folders, tmp_path, kind, name, key, value):
    """A copy of folder `kind` whose JSON file `name` has `key` set to `value` (key None: the whole file)."""
    folder = shutil.copytree(folders / kind, tmp_path / kind)
    path = folder / name
    data = value if key is None else {**json.loads(path.read_text(encoding="utf-8")), key: value}
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder


def contents(folder):
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


# name -> (folder, file, key (None: the whole file), value, what the error line says)
CASES = {
    "added_tokens a number": ("hf", "tokenizer.json", "added_tokens", 5,
                              "tokenizer.json: added_tokens must be a list of objects, got the number 5; "),
    "tokenizer_config a list": ("plain", "tokenizer_config.json", None, [1, 2],
                                "tokenizer_config.json: the file must be a JSON object, not the list [1, 2]; "
                                "fix or delete it"),
    "max_input_chars_per_word a string": ("plain", "tokenizer_config.json", "max_input_chars_per_word", "abc",
                                          "tokenizer_config.json: max_input_chars_per_word must be an integer "
                                          ">= 1, got the string 'abc'; fix or delete it"),
    "do_lower_case 'no'": ("plain", "tokenizer_config.json", "do_lower_case", "no",
                           "tokenizer_config.json: do_lower_case must be true or false, got the string 'no'"),
    "pooling mode 'x'": ("plain", "1_Pooling/config.json", "pooling_mode_mean_tokens", "x",
                         "1_Pooling/config.json: pooling_mode_mean_tokens must be true or false, got the string "
                         "'x'; fix it, or save the model again with sentence-transformers"),
    "sentence do_lower_case 1": ("hf", "sentence_bert_config.json", "do_lower_case", 1,
                                 "sentence_bert_config.json: do_lower_case must be true or false, got the number "
                                 "1"),
    "is_decoder 'no'": ("plain", "config.json", "is_decoder", "no",
                        "config.json: is_decoder='no': it must be true or false"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_field_of_the_wrong_type_is_one_line_naming_it(folders, tmp_path, capsys, case):
    """`embed --model DIR hi` on a folder with one hand-edited field: exit 2 and one line `error: ...` that
    names the file, the field and the value found; the folder's files are unchanged."""
    kind, name, key, value, message = CASES[case]
    folder = edited_copy(folders, tmp_path, kind, name, key, value)
    before = contents(folder)
    with pytest.raises(SystemExit) as caught:
        main(["embed", "--model", str(folder), "hi"])
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 2 and "\n" not in err and "Traceback" not in err, err
    assert err.startswith("error: ") and message in err, err
    assert contents(folder) == before


def test_the_unedited_folders_embed(folders, capsys):
    """The folders the cases above edit are good ones: `embed` reads both."""
    for kind in ("plain", "hf"):
        with pytest.raises(SystemExit) as caught:
            main(["embed", "--model", str(folders / kind), "a man plays guitar", "hi"])
        assert caught.value.code == 0, capsys.readouterr().err


# ----- the fuzz test: every JSON file of both folders, mutated field by field -----

JSON_FILES = [("hf", "tokenizer.json"), ("plain", "tokenizer_config.json"), ("plain", "config.json"),
              ("hf", "modules.json"), ("plain", "sentence_bert_config.json"), ("hf", "1_Pooling/config.json")]
# One of each kind of JSON value, and the edge of each: what a hand edit or a damaged writer puts in a field.
VALUES = [None, True, False, 0, 1, -1, 7, 2**70, 0.5, -1e300, "", "x", "true", "[UNK]", "BertNormalizer", [],
          [1], ["a"], [{}], {}, {"type": "WordPiece"}, {"a": [None]}]
CASES_PER_FILE = 100


def places(data, path=()):
    """Every place in a parsed JSON document, as a path of keys and indices (() is the whole document)."""
    found = [path]
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        found += places(child, path + (key,))
    return found


def mutate(rng, data):
    """A copy of `data` with one random change: a value replaced by one of another kind, a key deleted, a
    value wrapped in a list or an object; or the whole document replaced. Returns (text, what was done)."""
    data = json.loads(json.dumps(data))
    path = rng.choice(places(data))
    action = rng.choice(["replace", "replace", "delete", "wrap"])
    if not path:
        return json.dumps(rng.choice(VALUES + [[data], {"x": data}])), f"whole document ({action})"
    *parents, last = path
    holder = data
    for key in parents:
        holder = holder[key]
    if action == "delete":
        del holder[last]
    elif action == "wrap":
        holder[last] = rng.choice([[holder[last]], {"x": holder[last]}])
    else:
        holder[last] = rng.choice(VALUES)
    return json.dumps(data), f"{action} at {list(path)}"


def load_as_embed_does(folder):
    SentenceEncoder.from_pretrained(folder).encode(["a man plays guitar"])
    BertTokenizer.from_pretrained(folder).encode("a man hi")
    BertModel.from_pretrained(folder, verbose=False)


def test_fuzzed_model_folder_json_is_read_or_refused(folders, tmp_path):
    """For each JSON file a model folder may hold, CASES_PER_FILE seeded mutations (a field replaced by a
    value of another kind, deleted, wrapped; the whole document replaced): loading the folder as `embed`
    does, and with BertTokenizer and BertModel, either works or raises a MinibertError, nothing else."""
    rng = random.Random(42)
    copies = {kind: shutil.copytree(folders / kind, tmp_path / kind) for kind in ("plain", "hf")}
    for kind, name in JSON_FILES:
        path = copies[kind] / name
        original = path.read_bytes()
        for _ in range(CASES_PER_FILE):
            text, change = mutate(rng, json.loads(original))
            path.write_text(text, encoding="utf-8")
            try:
                load_as_embed_does(copies[kind])
            except MinibertError:
                pass
            except Exception as error:  # noqa: BLE001 - the point: anything else is a bug to report
                pytest.fail(f"{kind}/{name}, {change} ({text[:300]}): {type(error).__name__}: {error}")
        path.write_bytes(original)
