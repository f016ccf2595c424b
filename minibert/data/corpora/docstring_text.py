"""Turning a docstring (reStructuredText, numpydoc, Google style, pydoc's plain text) into prose sentences.

A pretraining corpus should be *prose*: BERT learns language from sentences, and a masked token inside
`>>> np.add(1, 2)` or a table border teaches it nothing it will meet in text. So we drop, in the order listed below:
"""

# 1. doctest blocks: a `>>>` line and everything after it up to the next blank line (the `...`
#    continuations and the printed output);
# 2. section headings (`Parameters` over `----------`), and the whole body of sections that are not
#    prose: Examples, See Also, References;
# 3. reST directives with their indented bodies (`.. code-block::`, `.. math::`, `.. plot::`), except the
#    admonitions whose bodies are prose (`.. note::`, `.. versionadded::`, ...);
# 4. literal blocks: the indented block after a paragraph ending in `::`;
# 5. tables: from a grid (`+----+`, `| a |`) or simple-table (`=====  =====`) line to the next blank line;
# 6. signature lines such as `add(x1, x2, /, out=None)` and lines that are only a URL.
#
# What is left is grouped into paragraphs (runs of lines with the same indentation; a list item starts a
# new one), inline markup is unwrapped (``` ``x`` ```, `:func:`~a.b``, `*x*` become plain words), the
# paragraph is split into sentences, and a sentence is kept only if it reads as prose: it ends in
# `.`, `!`, `?` or `:`, has 3 to 64 words, is mostly letters rather than code symbols, and does not look
# like a line of Python (a comment, a decorator, `x = f(...)`, `for ...:`).
# Field lists keep their text: `:param x: The input.` and numpydoc's indented parameter descriptions
# become the sentence `The input.`; the `x : array_like` line above it has no period and falls away.

import regex

from minibert.data.corpora.sentences import split_sentences

# Sections whose bodies are code, cross references or citations rather than prose.
DROPPED_SECTIONS = frozenset({"examples", "example", "see also", "references", "index"})

# Directives whose bodies are prose worth keeping; every other directive is dropped with its body.
PROSE_DIRECTIVES = frozenset({
    "note", "warning", "tip", "hint", "important", "caution", "attention", "danger", "error", "admonition",
    "versionadded", "versionchanged", "deprecated",
})

# A sentence longer than this is almost always run-together list or code text, and could never fit a
# 128-token BERT segment anyway.
MAX_SENTENCE_WORDS = 64
MIN_SENTENCE_WORDS = 3

_BORDER = regex.compile(r"^\s*([-=~^*#+`:.'\"_])\1{2,}\s*$")  # a heading underline: one repeated char
_TABLE_LINE = regex.compile(r"^\s*(\+[-=+]{3,}|\|.*\||=+(\s+=+)+\s*$|-+(\s+-+)+\s*$)")
_DIRECTIVE = regex.compile(r"^\s*\.\.\s+([\w:-]+)::")
_EXPLICIT_MARKUP = regex.compile(r"^\s*\.\.(\s|$)")  # comments, targets, citations, substitutions
_BULLET = regex.compile(r"^([-*+•]|\d+[.)]|\(?[a-z0-9]\)|#\.)\s+")
_SIGNATURE = regex.compile(r"^[\w.]+\(.*(\)\s*(->.*)?|[,(\[])$")
_URL_ONLY = regex.compile(r"^<?(https?|ftp)://\S+>?$")
_FIELD = regex.compile(r"^:(param|parameter|arg|argument|key|keyword|type|raises?|returns?|rtype|yields?|"
                       r"var|ivar|cvar)\b[^:]*:\s*")
_GOOGLE_ENTRY = regex.compile(r"^\*{0,2}\w+\*{0,2}(\s*\([^)]*\))?:\s+(?=\S)")
_GOOGLE_SECTION = regex.compile(r"^(Args|Arguments|Parameters|Returns?|Yields?|Raises|Attributes|Examples?|"
                                r"Notes?|Warns?|Keyword Args|Keyword Arguments|Other Parameters):\s*$")

_INLINE_RULES = [
    (regex.compile(r":[\w:.-]+:`!?~([^`<]*?)\s*(<[^>]*>)?`"), lambda m: m.group(1).split(".")[-1]),  # ~a.b: b
    (regex.compile(r":[\w:.-]+:`!?([^`<]*?)\s*(<[^>]*>)?`"), lambda m: m.group(1)),  # :func:`a.b`: a.b
    (regex.compile(r"``(.+?)``"), lambda m: m.group(1)),
    (regex.compile(r"`([^`<]+?)\s*<[^>]+>`__?"), lambda m: m.group(1)),  # `text <url>`_
    (regex.compile(r"`([^`]+)`__?"), lambda m: m.group(1)),  # `target`_
    (regex.compile(r"`~([^`]+)`"), lambda m: m.group(1).split(".")[-1]),  # `~a.b` -> b
    (regex.compile(r"`([^`]+)`"), lambda m: m.group(1)),
    (regex.compile(r"\s*\[[\w#*-]+\]_"), lambda m: ""),  # footnote and citation references
    (regex.compile(r"(?<![\w*])\*\*(?=\S)([^*]+?)(?<=\S)\*\*(?![\w*])"), lambda m: m.group(1)),
    (regex.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])"), lambda m: m.group(1)),
    (regex.compile(r"\|(\w[\w .-]*)\|"), lambda m: m.group(1)),  # |substitution|
    (regex.compile(r"\\([^\w\\])"), lambda m: "" if m.group(1) == " " else m.group(1)),  # \* -> *
]


def unwrap_inline_markup(text):
    """Replace reST inline markup by its plain text: ``x`` -> x, :class:`~a.B` -> B, *x* -> x."""
    for pattern, replacement in _INLINE_RULES:
        text = pattern.sub(replacement, text)
    return text


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _end_of_indented_body(lines, start, indent):
    """Index just past the block of lines after `start` that are blank or indented deeper than `indent`."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    return end


def _drop_tables(lines):
    """Step 5: in each blank-line-separated block, drop everything from its first table line on.

    Lines before the table stay: a numpydoc heading often sits right above a table, with no blank line.
    """
    kept, in_table = [], False
    for line in lines:
        if not line.strip():
            in_table = False
        elif _TABLE_LINE.match(line):
            in_table = True
        if not in_table:
            kept.append(line)
    return kept


def _dedent(lines):
    indents = [_indent(line) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def _prose_lines(lines):
    """Steps 1-4 and 6 listed at the top of this module: the lines that may hold prose, blank lines kept."""
    kept = []
    in_dropped_section = False
    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        following = lines[i + 1] if i + 1 < len(lines) else ""
        underlined = (stripped and _BORDER.match(following) and not _BORDER.match(line)
                      and (i == 0 or not lines[i - 1].strip()))
        if underlined or _GOOGLE_SECTION.match(stripped):
            in_dropped_section = stripped.rstrip(":").lower() in DROPPED_SECTIONS
            kept.append("")
            i += 2 if underlined else 1
            continue
        if in_dropped_section:
            i += 1
            continue
        if stripped.startswith(">>>"):
            while i < len(lines) and lines[i].strip():
                i += 1
            continue
        directive = _DIRECTIVE.match(line)
        if directive or _EXPLICIT_MARKUP.match(line):
            end = _end_of_indented_body(lines, i, _indent(line))
            name = directive.group(1).lower() if directive else ""
            if name in PROSE_DIRECTIVES:
                argument = line[directive.end():].strip()
                body = ([] if name.startswith(("version", "deprecated")) else [argument])
                kept.extend(["", *_prose_lines(_dedent([*body, *lines[i + 1:end]])), ""])
            else:
                kept.append("")
            i = end
            continue
        if _BORDER.match(line) or _SIGNATURE.match(stripped) or _URL_ONLY.match(stripped):
            i += 1
            continue
        if stripped.endswith("::"):
            # reST: "text::" reads as "text:" and a lone "::" vanishes; the literal block after it goes.
            text = line.rstrip()[:-2].rstrip()
            kept.extend([text + ":" if line.rstrip()[-3:-2] not in (" ", "") else text, ""])
            i = _end_of_indented_body(lines, i, _indent(line))
            continue
        kept.append(line)
        i += 1
    return kept


def _paragraphs(lines):
    """Group prose lines into paragraphs: a blank line, a change of indentation, a list item or a field
    (`:param x:`, whose marker is dropped) starts one."""
    paragraphs, current, current_indent = [], [], None
    for line in lines:
        if not line.strip():
            current_indent = None
        else:
            indent, content = _indent(line), line.strip()
            bullet = _BULLET.match(content) or _FIELD.match(content)  # each item or field is a paragraph
            if bullet:
                indent, content = indent + bullet.end(), content[bullet.end():]
            if bullet or indent != current_indent:
                current = []
                paragraphs.append(current)
                current_indent = indent
            current.append(content)
    return [" ".join(paragraph) for paragraph in paragraphs]


_LETTER = regex.compile(r"\p{L}")
# Code that slipped through as a paragraph: a comment, a decorator, a prompt, an assignment from a call,
# or a line that starts with a Python keyword and ends like a statement.
_CODE = regex.compile(r"^[#@$>|]|\w\s=\s[\w.]+\(|"
                      r"^(def|class|for|while|if|elif|else|with|try|except|async|await|return|import|from|print)"
                      r"\b.*[:)]$")
_FINAL = regex.compile(r"""[.!?:]["'”’)\]]*$""")


def is_prose(sentence):
    """True if a sentence reads as prose rather than code, a fragment or a run-on list."""
    words = sentence.split()
    if not MIN_SENTENCE_WORDS <= len(words) <= MAX_SENTENCE_WORDS or not _FINAL.search(sentence):
        return False
    if _CODE.search(sentence):
        return False
    visible = sum(len(word) for word in words)
    return len(_LETTER.findall(sentence)) >= 0.75 * visible


def docstring_sentences(docstring):
    """The prose sentences of a docstring, in order, after all the cleaning listed at the top of this module."""
    if not docstring or not docstring.strip():
        return []
    lines = _drop_tables(_dedent_docstring(docstring))
    sentences = []
    for paragraph in _paragraphs(_prose_lines(lines)):
        paragraph = _GOOGLE_ENTRY.sub("", paragraph)
        for sentence in split_sentences(unwrap_inline_markup(paragraph)):
            if is_prose(sentence):
                sentences.append(sentence)
    return sentences


def _dedent_docstring(docstring):
    """PEP 257's rule (what `inspect.cleandoc` does): the first line is flush, the rest share an indent."""
    lines = docstring.expandtabs(8).splitlines()
    return [lines[0].strip(), *_dedent(lines[1:])] if lines else []
