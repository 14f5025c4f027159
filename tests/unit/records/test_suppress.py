"""Suppression comments (`# tilelens: ignore[...]`) and code selection, on records and text alone."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tilelens_lsp import suppress
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.model import Diagnostic, FileResult, Frame, LaunchResult

SOURCE = textwrap.dedent("""\
    import triton
    # tilelens: ignore[TL100]
    @triton.jit
    def k(x_ptr,
          n):
        y = f(x_ptr,  # tilelens: ignore[tl001, TL002]
              n)
        s = "# tilelens: ignore"
        # tilelens: ignore

        z = g()  # tilelens: ignore[TL003]  # the sizes are checked by the caller
""")


def by_line(text: str) -> dict[int, suppress.Suppression]:
    return {s.line: s for s in suppress.find(text)}


def test_a_comment_above_a_decorated_def_covers_the_decorators_and_the_def():
    assert by_line(SOURCE)[2].targets == {3, 4, 5}


def test_a_trailing_comment_covers_every_line_of_its_statement():
    s = by_line(SOURCE)[6]
    assert (s.targets, s.codes) == ({6, 7}, ("TL001", "TL002"))


def test_a_bare_comment_alone_skips_blank_lines_to_the_next_code():
    s = by_line(SOURCE)[9]
    assert (s.targets, s.codes) == ({11}, None)


def test_a_reason_may_follow_as_another_comment():
    assert by_line(SOURCE)[11].codes == ("TL003",)


def test_text_inside_a_string_is_not_a_suppression():
    assert 8 not in by_line(SOURCE)


def test_a_binding_named_ignore_is_not_a_suppression():
    assert suppress.find("# tilelens: ignore = 3\nx = 1\n") == []


def test_suppressions_are_not_read_as_launch_directives():
    text = "# tilelens: ignore[TL002]\n# tilelens: ignore\n# tilelens: ignore[TL002,TL004]  # why\nx = 1\n"
    assert parse_directives(text) == ([], [])


def test_a_malformed_launch_next_to_a_suppression_is_still_reported():
    _, errors = parse_directives("# tilelens: ignore[TL002]\n# tilelens: k[(1,)](fp33[4])\n")
    assert [e.line for e in errors] == [2]


# ---------------------------------------------------------------- applying them

TEXT = "a = 1  # tilelens: ignore[TL001]\nb = 2\n# tilelens: ignore\nc = 3\n"


def result(*diags: Diagnostic, status: str = "analyzed") -> FileResult:
    return FileResult("k.py", (LaunchResult("k", 9, {}, status, diagnostics=diags),))


def d(code: str, line: int, path: str = "k.py") -> Diagnostic:
    return Diagnostic(code, f"{code} here", line, 1, stack=(Frame(path, line, 1),))


def codes_at(r: FileResult) -> list[tuple[str, int]]:
    return sorted((x.code, x.line) for x in r.all_diagnostics())


def test_only_the_named_code_is_silenced_on_the_line():
    r = suppress.apply(result(d("TL001", 1), d("TL002", 1), d("TL001", 2), d("TL003", 4)), TEXT)
    assert codes_at(r) == [("TL001", 2), ("TL002", 1)]


def test_an_analysis_that_did_not_finish_reports_no_unused_suppression():
    assert codes_at(suppress.apply(result(status="refused"), TEXT)) == []
    assert codes_at(suppress.apply(result(status="analyzed"), TEXT)) == [("TL060", 1), ("TL060", 3)]


def test_a_verdict_inside_a_helper_is_silenced_at_its_call_site_here():
    inside = Diagnostic("TL001", "in helper", 7, 3, stack=(Frame("helpers.py", 7, 3), Frame("k.py", 4, 5)))
    assert codes_at(suppress.apply(result(inside), TEXT)) == [("TL060", 1)]


def test_a_directive_error_spanning_lines_is_silenced_from_any_of_them():
    text = "# tilelens: k[(1,)](\n# tilelens:    fp33[4])  # tilelens: ignore[TL020]\n"
    err = Diagnostic("TL020", "unknown dtype", 1, 13, end_line=2)
    assert codes_at(suppress.apply(FileResult("k.py", (), (err,)), text)) == []


def test_an_unknown_code_in_a_suppression_is_named():
    r = suppress.apply(result(), "x = 1  # tilelens: ignore[TL2]\n")
    [unused] = r.all_diagnostics()
    assert (unused.code, unused.severity, "TL2" in unused.message) == ("TL060", "information", True)


# ---------------------------------------------------------------- --select / --ignore


def test_the_most_specific_selector_wins_and_ignore_wins_ties():
    sel, ign = suppress.parse_codes(["TL001"]), suppress.parse_codes(["TL0"])
    assert [c for c in ("TL001", "TL002", "TL100") if suppress.selected(c, sel, ign)] == ["TL001"]
    assert not suppress.selected("TL001", suppress.parse_codes(["TL001"]), suppress.parse_codes(["tl001"]))
    assert [c for c in ("TL001", "TL100") if suppress.selected(c, None, suppress.parse_codes(["TL1"]))] == ["TL001"]


# ---------------------------------------------------------------- the text search before the tokenizer


def _tokenized(text: str, monkeypatch) -> list[suppress.Suppression]:
    """`find` with its pre-check switched off: every text is tokenized."""
    with monkeypatch.context() as m:
        m.setattr(suppress, "_ANY_IGNORE", re.compile(""))
        return suppress.find(text)


def test_a_file_without_suppression_text_finds_what_tokenizing_it_finds(monkeypatch):
    repo = Path(__file__).resolve().parents[3]
    texts = [p.read_text("utf-8") for p in sorted((repo / "tests" / "conformance" / "kernels").glob("*.py"))]
    texts += [p.read_text("utf-8") for p in sorted((repo / "samples").glob("*.py"))]
    spellings = [
        "x = 1  # tilelens: ignore\n",
        "x = 1  #tilelens:ignore[TL002]\n",
        "x = 1  #\ttilelens:\tignore\n",
        "# tilelens: ignore\r\nx = 1\r\n",
        "x = 1  # tilelens: k[(1,)](1)  # tilelens: ignore[TL020]\n",
        "x = 1  # tilelens: ignored\n",  # not a suppression: `ignored` is another word
        "x = 1  # tilelens: ignore = 3\n",  # a binding
        's = """\n# tilelens: ignore\n"""\n',  # inside a string
        "def f(:\n    x = 1  # tilelens: ignore\n",  # does not tokenize: the plain search past the failure
    ]
    for text in texts + spellings + [t + s for t in texts[:5] for s in spellings]:
        assert suppress.find(text) == _tokenized(text, monkeypatch), text[:200]
    assert suppress.find(spellings[0]) and not suppress.find(spellings[5])
