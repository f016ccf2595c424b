"""One self-contained HTML page: a template, its script and style, and the data, in a single file.

The pages (the attention explorer, a run's report) must open from disk with no network and no file beside
them, and be readable as code. So each page is kept as plain files in `minibert/viz/templates/`: NAME.html
(its body), NAME.css (its style) and NAME.js (plain JavaScript that draws with SVG and canvas), beside what
every page shares: page.html (the skeleton), page.css and common.js (helpers). `html_page` pastes them and the
data (JSON) into the skeleton, so the result is one file that can be mailed or opened mid-run.

    page = html_page("attention", "attention: my run", {"sentences": [...]})
"""

# The data goes inside <script type="application/json">, which the browser never runs; `page_json` escapes
# "<" as \u003c so that no text in the data (a token "</script>", say) can end that element early.

import base64
import json
import math
import re
from importlib import resources

import numpy as np

from minibert.surrogates import shown
from minibert.viz.svg import escape

TEMPLATES = "templates"  # the folder beside this file; pyproject.toml ships it as package data
# The places page.html marks: {{title}}, {{body}} and {{data}}, and /*{{style}}*/ and /*{{script}}*/, written
# as comments so that the skeleton stays valid CSS and JavaScript where they stand.
MARKER = re.compile(r"/\*\{\{(style|script)\}\}\*/|\{\{(title|body|data)\}\}")


def template(name):
    """The text of one template file, read from the installed package (a wheel includes them)."""
    return resources.files("minibert.viz").joinpath(TEMPLATES).joinpath(name).read_text(encoding="utf-8")


def page_json(data):
    """`data` as JSON that is safe inside an HTML <script> element: NumPy numbers as Python ones, NaN and
    infinity as null (JSON has neither), text as a person reads it (a byte that is not UTF-8, in a folder's
    name say, as `\\xff`: minibert/surrogates.py), and "<", ">" and "&" escaped."""
    text = json.dumps(_plain(data), ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_page(name, title, data):
    """The page NAME (templates NAME.html, NAME.css, NAME.js) with `title` and `data` embedded: one HTML
    string."""
    parts = {"title": escape(title), "body": template(f"{name}.html"),
             "style": template("page.css") + template(f"{name}.css"),
             "script": template("common.js") + "\n" + template(f"{name}.js"), "data": page_json(data)}
    # One pass, so that nothing pasted in (a title, a token in the data) is read as a marker in its turn.
    return MARKER.sub(lambda match: parts[match.group(1) or match.group(2)], template("page.html"))


def weights_base64(array):
    """Attention weights in [0, 1] as base64 text of one byte each (0..255): four times smaller than JSON
    numbers, and finer than the eye reads a line's shade. The page decodes them with atob."""
    values = np.clip(np.rint(np.asarray(array, dtype=np.float64) * 255), 0, 255).astype(np.uint8)
    return base64.b64encode(values.tobytes()).decode("ascii")


def _plain(value):
    if isinstance(value, dict):
        return {shown(str(key)): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return shown(value)
    return value
