"""docs/directives.md teaches by example: every directive and toml launch it shows must parse as written."""

from __future__ import annotations

import re
import tomllib

from tests.support import REPO
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.launches.statements import run_statements

DOC = REPO / "docs" / "directives.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_every_python_example_s_directives_parse_without_an_error():
    examples = blocks("python")
    assert len(examples) >= 6
    for example in examples:
        launches, errors = parse_directives(example)
        assert errors == [], (example, errors)


def test_every_toml_example_is_valid_toml_whose_lets_and_launches_parse():
    examples = blocks("toml")
    assert len(examples) >= 2
    tables = []
    for example in examples:
        data = tomllib.loads(example)
        tables += data.get("launch", []) + data.get("tool", {}).get("tilelens", {}).get("launch", [])
    assert len(tables) >= 3
    for table in tables:
        env: dict = {}
        _, errors = run_statements(
            table.get("let", ""), env, locate=lambda l, c: (l, c + 1), end_line=1, origin="tilelens.toml", mode="bindings"
        )
        launches, more = run_statements(
            table["launch"], env, locate=lambda l, c: (l, c + 1), end_line=1, origin="tilelens.toml", mode="launch"
        )
        assert errors + more == [] and len(launches) == 1, (table, errors + more)
