"""docs/bad_input.md, the inventory of bad inputs, stays true to the suite: every row names a test, and
every test it names exists in the file it names."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
INVENTORY = TESTS.parent / "docs" / "bad_input.md"
REFERENCE = re.compile(r"(?:(\w+\.py)::)?(?:…|(test_\w+))")


def rows():
    """(line number, last cell) of every row of the table, below its header row."""
    found = []
    for number, line in enumerate(INVENTORY.read_text(encoding="utf-8").splitlines(), start=1):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("area", "---"):
            found.append((number, cells[-1]))
    return found


def named_tests(cell, previous):
    """(file, test) pairs a cell names. A bare `::test` keeps the file named before it; `…` in place of a
    test name repeats the last test named (in this row or the rows above), `previous`."""
    pairs, current = [], previous[0] if previous else None
    for file, test in REFERENCE.findall(cell):
        current = file or current
        test = test or (pairs[-1][1] if pairs else previous[1] if previous else None)
        if test:
            pairs.append((current, test))
    return pairs


def test_the_inventory_has_rows_for_every_entry_point():
    """One table, whose areas cover every kind of entry point, with many rows."""
    text = INVENTORY.read_text(encoding="utf-8")
    assert text.count("| area | entry point |") == 1
    areas = {line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")}
    assert {"command line", "run folders", "question answering", "tokenizer", "model", "numerics", "files",
            "data builder", "fine-tuning readers", "load"} <= areas
    assert len(rows()) > 120


def test_every_row_names_tests_that_exist():
    """Each row's last cell names at least one test, and each named test is defined in its file."""
    sources = {path.name: path.read_text(encoding="utf-8") for path in TESTS.glob("test_*.py")}
    previous = None
    for number, cell in rows():
        pairs = named_tests(cell, previous)
        assert pairs, f"bad_input.md:{number} names no test"
        previous = pairs[-1]
        for file, test in pairs:
            assert file in sources, f"bad_input.md:{number}: no file {file}"
            assert f"def {test}(" in sources[file], f"bad_input.md:{number}: no {test} in {file}"
