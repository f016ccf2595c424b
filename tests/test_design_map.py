"""The map is the territory: docs/design.md names, in reading order, the files one attention layer runs.

The section "Following one attention layer" lists every minibert file that `import minibert.nn.transformer`
loads (forward and backward of one layer), and the files that the accelerated path adds. A package's
`__init__.py` counts when it holds code of its own (a function or class, like `minibert.fast.accelerate`);
one that only lists its modules, or only finds a name's module when first asked (PEP 562's `__getattr__`),
is no file a reader follows. Each test computes the set in a fresh interpreter, so an import added anywhere
on the path shows up here, and compares it with the page.
"""

import ast
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
MOST_FILES = 12  # a reader opens a dozen files for one layer (the layout before loaded sixteen)

LOADED = """
import sys
{before}
before = set(sys.modules)
{after}
for name in sorted(set(sys.modules) - before):
    if name.startswith("minibert"):
        print(sys.modules[name].__file__)
"""


def loaded_files(after, before=""):
    """The minibert files (relative to the repo) that `after` loads in a fresh interpreter beyond `before`."""
    script = LOADED.format(before=before, after=after)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    paths = [pathlib.Path(line).resolve() for line in result.stdout.split("\n") if line]
    return [path.relative_to(ROOT).as_posix() for path in paths if holds_code(path)]


def holds_code(path):
    """False for a package's `__init__.py` that defines nothing but PEP 562's `__getattr__`."""
    if path.name != "__init__.py":
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name != "__getattr__"
               for node in tree.body)


def section(title):
    """The text of docs/design.md's section whose heading starts with `title`, up to the next heading."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"docs/design.md has no section '## {title}...'"
    return match.group(1)


def listed_files(text):
    """The files a numbered list names first on each of its items, in order."""
    return re.findall(r"^\d+\. `(minibert/[\w/]+\.py)`", text, re.M)


def assert_same_files(listed, loaded):
    assert len(listed) == len(set(listed)), f"a file is listed twice: {listed}"
    assert set(listed) == set(loaded), (f"listed but not loaded: {sorted(set(listed) - set(loaded))}; "
                                        f"loaded but not listed: {sorted(set(loaded) - set(listed))}")


def test_the_design_lists_every_file_one_attention_layer_loads():
    layer_text = section("Following one attention layer").split("### ")[0]
    loaded = loaded_files("import minibert.nn.transformer")
    assert_same_files(listed_files(layer_text), loaded)
    assert len(loaded) <= MOST_FILES, f"one attention layer takes {len(loaded)} files: {loaded}"


def test_the_design_lists_the_files_the_accelerated_path_adds():
    fast_text = section("Following one attention layer").split("### ")[1]
    assert_same_files(listed_files(fast_text), loaded_files("import minibert.fast", before="import minibert.model"))
