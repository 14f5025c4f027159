"""The mutation list still applies to the current sources (the mutation run itself is tools/mutation/mutate.py, not pytest).

Cheap: no mutation is run here. When a product edit moves or rewrites a snippet, this fails and names
the mutation, so the list is updated instead of silently mutating nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

MUTATE = Path(__file__).resolve().parents[2] / "tools" / "mutation" / "mutate.py"


def _load():
    spec = importlib.util.spec_from_file_location("tilelens_mutation_list", MUTATE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mutate = _load()


def test_the_list_holds_at_least_25_mutations():
    assert len(mutate.MUTATIONS) >= 25


def test_mutation_names_are_unique():
    names = [m.name for m in mutate.MUTATIONS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("mutation", mutate.MUTATIONS, ids=lambda m: m.name)
def test_snippet_occurs_exactly_once_and_the_mutant_compiles(mutation):
    source = (mutate.PACKAGE / mutation.file).read_text(encoding="utf-8")
    assert source.count(mutation.original) == 1, (
        f"{mutation.name}: snippet occurs {source.count(mutation.original)} times in {mutation.file}"
    )
    assert mutation.mutated != mutation.original
    compile(source.replace(mutation.original, mutation.mutated), mutation.file, "exec")


def test_check_list_reports_no_problem():
    assert mutate.check_list() == []
