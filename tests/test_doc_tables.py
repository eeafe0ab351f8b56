"""The manual's Markdown tables: every table row of docs/*.md and README.md belongs to a table.

A table interrupted by a blank line renders as a table and a paragraph of
pipes, without a warning from MyST; docs/conf.py's ``broken_tables`` finds
such rows and the manual's build (``sphinx-build -W``) fails on them.  Here:
it finds each kind of break, and the pages have none.
"""

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
broken_tables = runpy.run_path(str(ROOT / "docs" / "conf.py"))["broken_tables"]

TABLE = "| study | what |\n|---|---|\n| `a` | one |\n| `b` | two, with `x|y` in code |\n"


def test_a_whole_table_passes():
    assert broken_tables("text\n\n" + TABLE + "\ntext |1> and |2>\n|0> starts a line of prose\n") == []


@pytest.mark.parametrize("text, line", [
    (TABLE.replace("| `b`", "\n| `b`"), 5),  # a blank line inside: the last row falls out
    ("| `a` | one |\n| `b` | two |\n", 1),  # rows without a header and separator
    (TABLE + "| `c` | three | extra |\n", 5),  # a row of another width
])
def test_a_broken_table_is_found(text, line):
    assert [n for n, _ in broken_tables(text)] == [line]


def test_a_fenced_block_is_not_a_table():
    assert broken_tables("```\n| not | a table |\n```\n") == []


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
                         + ["README.md"])
def test_every_page_has_whole_tables(page):
    assert broken_tables((ROOT / page).read_text(encoding="utf-8")) == []
