"""The `pydocs` corpus: real English prose that every machine with Python already has.

Sources, read from the Python that runs the build (so no network is needed):
- the docstrings of the standard library's modules, classes, functions and methods;
- the reference-manual topics of `pydoc_data.topics` (what `help("for")` prints);
- the docstrings of the packages minibert depends on: numpy (the richest: most of its reference manual
  lives in docstrings, many attached to C functions and ufuncs with `add_newdoc`), numba, regex, pytest
  (whose code lives in its private package `_pytest`) and hypothesis.
"""

# Each docstring is cleaned into prose sentences by `docstring_text.docstring_sentences` (no code examples,
# doctests or tables). A document is a module (its docstring and those of its functions), a class that has
# documented methods, or a pydoc topic; documents are sorted by name and identical docstrings appear once.
# The text depends on the installed versions, so `versions.json` records them beside the corpus.

import contextlib
import importlib
import inspect
import io
import pkgutil
import sys
import time
import warnings
from pathlib import Path

from minibert.data.corpora.corpus_file import package_versions, write_corpus
from minibert.data.corpora.docstring_text import docstring_sentences

# Importing a module runs its code, so some are never imported (STDLIB_SKIPPED says why for each): those
# with visible side effects (`antigravity` opens a browser, `this` prints a poem, `readline` writes terminal
# codes), the IDLE and turtle GUI programs (`tkinter` itself only defines classes until a window is made,
# so its docstrings are read), test suites, `__main__` modules, and private (`_name`) submodules, whose
# public objects we reach through the public modules that re-export them. Imports run with printing and
# warnings silenced; a module that fails to import is listed in `versions.json` and skipped.

# Top-level standard-library modules never imported, with the reason.
STDLIB_SKIPPED = {
    "antigravity": "opens a web browser",
    "this": "prints the Zen of Python",
    "readline": "writes terminal control codes when imported",
    "idlelib": "the IDLE application: some of its modules start the GUI when imported",
    "turtle": "opens a window on first use, and its docs are mostly examples",
    "turtledemo": "GUI demos",
    "test": "the test suite",
    "lib2to3": "deprecated, and its fixers are one-line docstrings",
    "distutils": "deprecated, and shadowed by setuptools when installed",
    "encodings": "a hundred generated codec modules",
    "pydoc_data": "read separately, as the pydoc topics",
}
# Dotted-name parts that mark modules never imported, anywhere in a package.
SKIPPED_PARTS = frozenset({"test", "tests", "testing", "idle_test", "conftest", "__main__"})
# Subpackages never walked: numpy.core is a deprecated alias of numpy._core, f2py and distutils are build
# tools, numba.cuda needs a GPU toolkit. pandas.util.version (read by pydocs-large) is a copy of the
# `packaging` library's version module, which the package-topics task asks about, so no corpus may hold it.
SKIPPED_PACKAGES = ("numpy.core", "numpy.f2py", "numpy.distutils", "numba.cuda", "pandas.util.version")

# The packages of requirements.txt and the modules walked in each ("name.*" walks all submodules).
# pytest's documented code lives in its private package `_pytest`; pytest itself only re-exports it.
PACKAGE_MODULES = {
    "numpy": ("numpy", "numpy.*"),
    "numba": ("numba", "numba.*"),
    "regex": ("regex",),
    "pytest": ("pytest", "_pytest", "_pytest.*"),
    "hypothesis": ("hypothesis", "hypothesis.*"),
}

# A function or class whose own docstring has this many sentences is a document of its own, so that
# numpy's namespace (hundreds of long docstrings) does not become one 5,000-sentence document.
OWN_DOCUMENT_SENTENCES = 8

# Methods named like these are documented once on `object`; on each class they repeat that text.
_KEPT_DUNDERS = frozenset({"__init__", "__call__"})


def default_modules(packages=PACKAGE_MODULES):
    """The module patterns of the full build: the whole standard library, then the `packages`."""
    stdlib = [f"{name}{suffix}" for name in sorted(sys.stdlib_module_names)
              if not name.startswith("_") and name not in STDLIB_SKIPPED for suffix in ("", ".*")]
    return stdlib + [pattern for patterns in packages.values() for pattern in patterns]


def _is_skipped(submodule):
    """True for a submodule a walk must not import: private, a test suite, or a skipped package."""
    parts = submodule.split(".")
    return (parts[-1].startswith("_") or any(part in SKIPPED_PARTS for part in parts)
            or submodule.startswith(SKIPPED_PACKAGES))


def _import_quietly(name):
    """Import a module with its warnings and printing silenced; None if it cannot be imported here."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module(name)
        except (Exception, SystemExit):  # a Windows-only module, a missing optional dependency, ...
            return None


def import_modules(patterns):
    """Import the modules named by `patterns` ("pkg" or "pkg.*"); return ({name: module}, [failed names])."""
    modules, failed = {}, []
    pending = sorted(set(patterns))
    while pending:
        pattern = pending.pop(0)
        walk = pattern.endswith(".*")
        name = pattern[:-2] if walk else pattern
        module = modules.get(name) or _import_quietly(name)
        if module is None:
            failed.append(name)
            continue
        modules[name] = module
        if walk and hasattr(module, "__path__"):
            children = [info.name for info in pkgutil.iter_modules(module.__path__, prefix=name + ".")]
            pending.extend(f"{child}{suffix}" for child in children if not _is_skipped(child)
                           for suffix in ("", ".*"))
            pending.sort()
    return dict(sorted(modules.items())), sorted(set(failed))


def own_docstring(obj):
    """The docstring written for `obj` itself, or None (an instance showing its class's doc has none)."""
    try:
        doc = obj.__doc__
    except Exception:  # some proxies raise on attribute access
        return None
    if not isinstance(doc, str) or not doc.strip():
        return None
    if not (inspect.isclass(obj) or inspect.isroutine(obj)) and doc == type(obj).__doc__:
        return None
    return doc


def _public_members(namespace):
    for name in sorted(namespace):
        if not name.startswith("_") and not inspect.ismodule(namespace[name]):
            yield name, namespace[name]


def _member_docstrings(cls):
    """Docstrings of a class's own methods and properties, sorted by name (inherited ones are elsewhere)."""
    docs = []
    for name in sorted(vars(cls)):
        if name.startswith("_") and name not in _KEPT_DUNDERS:
            continue
        doc = own_docstring(vars(cls)[name])
        if doc is not None and doc != getattr(getattr(object, name, None), "__doc__", None):
            docs.append(doc)
    return docs


def _owned_objects(modules):
    """{module name: [(attribute name, object)]}: each documented object listed once, under its home.

    An object re-exported by several modules belongs to the module its `__module__` names when we walked
    that module, else to the first module (in sorted order) that exposes it. One defined in a package never
    walked (SKIPPED_PACKAGES) is left out wherever it is re-exported.
    """
    found = {}  # id(object) -> [object, attribute name, module names]
    for module_name, module in modules.items():
        for attribute, obj in _public_members(vars(module)):
            home = getattr(obj, "__module__", None)
            if own_docstring(obj) is not None and not (isinstance(home, str) and home.startswith(SKIPPED_PACKAGES)):
                found.setdefault(id(obj), [obj, attribute, []])[2].append(module_name)
    owned = {name: [] for name in modules}
    for obj, attribute, module_names in found.values():
        home = getattr(obj, "__module__", None)
        owned[home if home in module_names else module_names[0]].append((attribute, obj))
    return {name: sorted(objects, key=lambda item: item[0]) for name, objects in owned.items()}


class _Deduplicator:
    """Cleans docstrings into sentences, returning [] for a docstring whose sentences were seen before."""

    def __init__(self):
        self.seen = set()

    def sentences(self, docstring):
        sentences = tuple(docstring_sentences(docstring)) if docstring else ()
        if not sentences or sentences in self.seen:
            return []
        self.seen.add(sentences)
        return list(sentences)


def module_documents(modules):
    """Yield (name, sentences) documents: one per module, one per class with documented methods, and one
    per long docstring (OWN_DOCUMENT_SENTENCES)."""
    dedup = _Deduplicator()
    owned = _owned_objects(modules)
    for module_name, module in modules.items():
        module_text = dedup.sentences(own_docstring(module))
        for attribute, obj in owned[module_name]:
            text = dedup.sentences(own_docstring(obj))
            members = []
            if inspect.isclass(obj):
                members = [sentence for doc in _member_docstrings(obj) for sentence in dedup.sentences(doc)]
            if members or len(text) >= OWN_DOCUMENT_SENTENCES:
                yield f"{module_name}.{attribute}", text + members
            else:
                module_text += text
        yield module_name, module_text


def topic_documents():
    """Yield (name, sentences) for each reference topic of `pydoc_data` (the text behind `help("for")`)."""
    from pydoc_data.topics import topics

    for name in sorted(topics):
        yield f"pydoc_data.topics.{name}", docstring_sentences(topics[name])


def build_pydocs(out_dir, progress=print, modules=None, include_topics=True, packages=PACKAGE_MODULES,
                 name="pydocs", details=None):
    """Build the pydocs corpus in `out_dir` (corpus.txt and versions.json); return the corpus path.

    `modules` (patterns like "json" or "email.*") restricts the build, for tests; None means the full
    build: the standard library and the `packages` ({distribution: module patterns}). `pydocs_large.py`
    passes more packages, its own corpus name, and `details` to add to versions.json.
    """
    started = time.perf_counter()
    patterns = default_modules(packages) if modules is None else list(modules)
    imported, failed = import_modules(patterns)
    progress(f"{name}: imported {len(imported)} modules ({len(failed)} cannot be imported here)")
    documents = dict(module_documents(imported))
    if include_topics:
        documents.update(topic_documents())
    # A document of one sentence can never give an IsNext pair, so it is left out.
    kept = {document: sentences for document, sentences in documents.items() if len(sentences) >= 2}
    record = {
        "packages": package_versions(packages),
        "modules_imported": len(imported),
        "modules_not_importable": failed,
        "include_topics": include_topics,
        "module_patterns": None if modules is None else sorted(patterns),
        **(details or {}),
    }
    path = write_corpus(Path(out_dir), name, (kept[document] for document in sorted(kept)), record, progress)
    progress(f"{name}: done in {time.perf_counter() - started:.1f} s")
    return path
