"""The JSON and SARIF documents `check` prints: the same data `json.dumps` writes, indented down to
the objects that hold other objects; an access, a frame or an array of intervals is one line."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tilelens_lsp.cli.report import dumps

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@given(st.dictionaries(st.text(max_size=5), DOCS, max_size=5))
def test_the_document_reads_back_as_the_data_it_was_given(doc):
    assert json.loads(dumps(doc)) == doc


def test_keys_that_are_no_strings_are_written_as_json_writes_them():
    doc = {7: {"a": {}}, False: {"b": [{}]}, None: {"c": {"d": 1}}, 2.5: {"e": {"f": 1}}}
    assert json.loads(dumps(doc)) == json.loads(json.dumps(doc))


def test_an_object_holding_no_object_is_one_line_and_the_rest_is_indented():
    access = {"op": "load", "line": 3, "elements": [[0, 32], [128, 160]], "exact": True}
    doc = {"files": [{"path": "k.py", "launches": [{"kernel": "k", "accesses": [access, access]}]}], "summary": {"files": 1}}
    assert dumps(doc) == (
        "{\n"
        '  "files": [\n'
        "    {\n"
        '      "path": "k.py",\n'
        '      "launches": [\n'
        "        {\n"
        '          "kernel": "k",\n'
        '          "accesses": [\n'
        f"            {json.dumps(access)},\n"
        f"            {json.dumps(access)}\n"
        "          ]\n"
        "        }\n"
        "      ]\n"
        "    }\n"
        "  ],\n"
        '  "summary": {"files": 1}\n'
        "}"
    )
