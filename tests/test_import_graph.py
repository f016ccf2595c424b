"""The import graph of minibert, read from the source: no cycles between files, no import pointing up the
package map of docs/design.md, and one module that reads a model folder.

Every `import` counts, those inside functions too: an import moved into a function still makes the two
files need each other, it only hides the cycle from Python's loader. A package's `__init__.py` is an edge
where it is named (`from minibert.model import BertModel`), not each time one of its modules is. Run it as a
script to print the graph's cycles and upward imports:

    python tests/test_import_graph.py
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minibert"

# docs/design.md's package map, bottom to top: a file imports only from its own layer and those before it.
# Within a layer, the packages are listed in the order they may import each other.
LAYERS = [
    ["errors", "cpu", "surrogates", "validation"],
    ["kernels"],
    ["autograd"],
    ["functional", "gradient_check"],
    ["nn"],
    ["config"],
    ["io"],
    ["model"],
    ["tokenizer"],
    ["data"],
    ["optim"],
    ["fast"],
    ["viz"],
    ["train"],
    ["inspect"],
    ["finetune"],
    ["experiments"],
    ["cli"],
    ["exercises", "__main__"],
]
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}
# The one cycle allowed: the engine's operators (`a @ b`, `a * b`) build the ops, and each op returns a Tensor.
ALLOWED_CYCLE = {"minibert.autograd.ops", "minibert.autograd.tensor"}


def module_files():
    """{dotted module name: path} of every minibert file; a package is named by its __init__.py."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_names(module, path):
    """Every dotted name `module` imports from minibert, at any depth of its code (relative imports
    resolved), with `from a import b` giving `a.b`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph():
    """{module: set of minibert modules it imports}: each name resolved to the longest module it names."""
    modules = module_files()
    graph = {}
    for module, path in modules.items():
        targets = set()
        for name in imported_names(module, path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("minibert.") and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def layer_of(module):
    """The package-map entry a module belongs to: `minibert.train.pretraining_run` -> "train"."""
    return module.split(".")[1]


def upward_imports(graph):
    """Every (importer, imported) pair whose imported module sits in a later layer, or in a later package of
    the same layer, than its importer. The package's own `minibert/__init__.py` names its modules as strings
    (imported when first used), so it imports none here."""
    found = []
    for module, targets in graph.items():
        for target in sorted(targets):
            here, there = layer_of(module), layer_of(target)
            if here == there or not {here, there} <= set(RANK):  # test_every_package_is_on_the_map fails
                continue
            same_layer = RANK[here] == RANK[there]
            order = LAYERS[RANK[here]]
            if RANK[there] > RANK[here] or (same_layer and order.index(there) > order.index(here)):
                found.append((module, target))
    return found


# The functions that read a model folder's weights, and the modules allowed to import them: the one reader
# of every kind of folder, the model's own from_pretrained, and the pretraining run reading its own checkpoint
# to resume. (io/ and train/checkpointing.py, where they are written, call each other freely.)
FOLDER_READERS = {"minibert.io.safetensors.read_safetensors", "minibert.io.read_safetensors",
                  "minibert.io.hf_names.find_weights_file", "minibert.io.find_weights_file",
                  "minibert.io.pretrained.read_config", "minibert.io.pretrained.load_pretrained",
                  "minibert.train.checkpointing.load_checkpoint", "minibert.train.checkpointing.load_run_config",
                  "minibert.inspect.model_folder.read_run_folder"}
FOLDER_READING_MODULES = {"minibert.inspect.model_folder", "minibert.model.savable", "minibert.train.pretraining_run"}


def folder_reads(modules):
    """(module, name) for each import of a FOLDER_READERS name outside io/ and train/checkpointing.py."""
    found = []
    for module, path in modules.items():
        if module.startswith("minibert.io") or module == "minibert.train.checkpointing":
            continue
        found += [(module, name) for name in imported_names(module, path) if name in FOLDER_READERS]
    return found


def test_one_module_reads_a_model_folder():
    """A model folder's weights are read by inspect/model_folder.py, and elsewhere only by the model's own
    from_pretrained and by a pretraining run resuming from its checkpoint: a second reader would fail here."""
    reads = folder_reads(module_files())
    assert {module for module, _ in reads} <= FOLDER_READING_MODULES, reads
    assert "minibert.inspect.model_folder" in {module for module, _ in reads}


def test_a_second_folder_reader_is_caught(tmp_path):
    """The check sees a module outside the allowed ones that imports a reader, inside a function too."""
    path = tmp_path / "reader.py"
    path.write_text("def weights(folder):\n    from minibert.io import read_safetensors\n"
                    "    return read_safetensors(folder)\n", encoding="utf-8")
    assert folder_reads({"minibert.cli.reader": path}) == [("minibert.cli.reader", "minibert.io.read_safetensors")]


def test_the_graph_sees_imports_inside_functions():
    """The builder reads an import written inside a function as an edge (the kind that hid a cycle)."""
    graph = import_graph()
    assert "minibert.cli.fill_mask" in graph
    source = module_files()["minibert.cli.fill_mask"].read_text(encoding="utf-8")
    inner = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)
             and any(isinstance(child, ast.ImportFrom) for child in ast.walk(node))]
    assert inner, "cli/fill_mask.py no longer imports inside a function; pick another file for this check"
    assert "minibert.inspect.fill_mask" in graph["minibert.cli.fill_mask"]


def test_cycles_are_found():
    """The cycle finder reports a two-file and a three-file cycle and nothing for a chain."""
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"e"}, "e": {"f"}, "f": {"d"}, "g": {"a"}}
    assert sorted(sorted(component) for component in cycles(graph)) == [["a", "b"], ["d", "e", "f"]]


def test_upward_imports_are_found():
    """config importing io (the arrow design.md had backwards) is upward; io importing config is not; within
    one layer, a package listed later is above one listed earlier."""
    graph = {"minibert.config": {"minibert.io.strict_json"}, "minibert.io.checkpoint": {"minibert.config"},
             "minibert.errors": {"minibert.cpu"}, "minibert.cpu": {"minibert.errors"}}
    assert sorted(upward_imports(graph)) == [("minibert.config", "minibert.io.strict_json"),
                                             ("minibert.errors", "minibert.cpu")]


def test_no_import_cycle_but_the_engine_and_its_ops():
    """No two minibert files import each other, directly or around a loop, except the autograd engine and
    its ops."""
    assert [component for component in cycles(import_graph()) if component != ALLOWED_CYCLE] == []


def test_every_package_is_on_the_map():
    """Every top-level module and package of minibert has its place in LAYERS (a new one must be placed)."""
    assert {layer_of(module) for module in import_graph() if module != "minibert"} <= set(RANK)


def test_no_import_points_up_the_package_map():
    """Each file imports only from its own package and those below it in docs/design.md's map."""
    assert upward_imports(import_graph()) == []


if __name__ == "__main__":
    graph = import_graph()
    for component in cycles(graph):
        print("cycle:", ", ".join(sorted(component)))
    for module, target in upward_imports(graph):
        print(f"upward: {module} imports {target}")
