"""Following the lines of an analysed text through unsaved edits (linemap.py), and the hover built on it."""

from __future__ import annotations

import random

from tilelens_lsp.lsp import hover, linemap
from tilelens_lsp.model import Access, FileResult, LaunchResult

TEXT = "a = 1\nb = 2\nload(x)\nc = 3\n"


def change(sl: int, sc: int, el: int, ec: int, text: str) -> dict:
    return {"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": text}


def follow(text: str, *changes: dict, encoding: str = "utf-16") -> linemap.Tracked:
    return linemap.advance(linemap.start(text), changes, encoding)


def test_lines_inserted_above_shift_the_lines_below():
    t = follow(TEXT, change(1, 0, 1, 0, "x = 0\ny = 0\n"))
    assert t.text == "a = 1\nx = 0\ny = 0\nb = 2\nload(x)\nc = 3\n"
    assert t.map.now(2) == 4 and t.map.now(0) == 0
    assert t.map.origin(1) == (None, frozenset())  # a wholly new line


def test_typing_inside_a_line_marks_it_edited_not_moved():
    t = follow(TEXT, change(2, 6, 2, 6, " + 1"))
    assert t.map.origin(2) == (None, frozenset({2}))
    assert t.map.now(2) is None and t.map.now(3) == 3


def test_enter_at_the_end_of_a_line_keeps_that_line_where_it_is():
    t = follow(TEXT, change(2, 7, 2, 7, "\n    "))
    assert t.map.now(2) == 2 and t.map.now(3) == 4
    assert t.map.origin(3) == (None, frozenset())


def test_enter_in_the_middle_of_a_line_edits_both_halves():
    t = follow(TEXT, change(2, 4, 2, 4, "\n"))
    assert t.map.origin(2) == (None, frozenset({2})) and t.map.origin(3) == (None, frozenset({2}))


def test_deleting_a_whole_line_from_its_start_moves_the_next_one_up():
    t = follow(TEXT, change(1, 0, 2, 0, ""))
    assert t.text == "a = 1\nload(x)\nc = 3\n"
    assert t.map.now(2) == 1 and t.map.now(1) is None


def test_deleting_a_whole_line_from_the_end_of_the_line_above_moves_the_next_one_up():
    t = follow(TEXT, change(0, 5, 1, 5, ""))
    assert t.text == "a = 1\nload(x)\nc = 3\n"
    assert t.map.now(0) == 0 and t.map.now(2) == 1 and t.map.now(1) is None


def test_the_changes_of_one_notification_apply_in_order_and_maps_compose():
    t = follow(TEXT, change(0, 0, 0, 0, "# one\n"), change(0, 0, 0, 0, "# two\n"))
    t = linemap.advance(t, [change(4, 0, 4, 1, "L")])  # now edit the moved `load(x)` line
    assert t.text == "# two\n# one\na = 1\nb = 2\nLoad(x)\nc = 3\n"
    assert t.map.now(1) == 3 and t.map.now(2) is None
    assert t.map.origin(4) == (None, frozenset({2}))  # the analysed line it was edited from


def test_a_whole_document_change_is_mapped_by_a_line_diff():
    t = linemap.advance(linemap.start(TEXT), [{"text": "# new\n" + TEXT.replace("c = 3", "c = 4")}])
    assert t.map.now(2) == 3
    assert t.map.origin(4) == (None, frozenset({3}))


def test_positions_count_utf16_units_by_default_and_utf8_when_negotiated():
    text = "s = '😀'; load(x)\n"
    # after the emoji: 2 UTF-16 units, 4 UTF-8 bytes, 1 character
    assert follow(text, change(0, 8, 0, 8, "#")).text == "s = '😀'#; load(x)\n"
    assert follow(text, change(0, 10, 0, 10, "#"), encoding="utf-8").text == "s = '😀'#; load(x)\n"
    assert follow(text, change(0, 7, 0, 7, "#"), encoding="utf-32").text == "s = '😀'#; load(x)\n"


def test_a_change_we_cannot_follow_is_resynced_by_a_diff():
    t = linemap.resync(linemap.start(TEXT), "# top\n" + TEXT)
    assert t.map.now(2) == 3 and t.text == "# top\n" + TEXT


def _apply_reference(text: str, sl: int, sc: int, el: int, ec: int, new: str) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    return text[: offsets[sl] + sc] + new + text[offsets[el] + ec :]


def test_random_edits_keep_the_text_exact_and_every_copy_identical_in_order():
    rng = random.Random(16)
    pieces = ["", "x", "load(p)", "\n", "ab\n", "\nq", "\n\n"]
    for _ in range(400):
        text = "\n".join(rng.choice(["", "a", "load(p)", "b = 1", "a"]) for _ in range(rng.randint(1, 6)))
        tracked = linemap.start(text)
        for _ in range(rng.randint(1, 4)):
            lines = tracked.text.split("\n")
            sl = rng.randrange(len(lines))
            el = rng.randrange(sl, len(lines))
            sc = rng.randint(0, len(lines[sl]))
            ec = rng.randint(0 if el > sl else sc, len(lines[el]))
            new = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 2)))
            expected = _apply_reference(tracked.text, sl, sc, el, ec, new)
            before = tracked
            tracked = linemap.advance(tracked, [change(sl, sc, el, ec, new)])
            assert tracked.text == expected
            step = linemap.apply_change(before.text, change(sl, sc, el, ec, new))[1]
            shift = len(expected.split("\n")) - len(lines)
            for old in list(range(sl)) + list(range(el + 1, len(lines))):  # untouched lines
                assert step.now(old) == (old if old < sl else old + shift)
        old_lines, new_lines = text.split("\n"), tracked.text.split("\n")
        copies = [c for c in tracked.map.copy_of if c is not None]
        assert copies == sorted(set(copies))  # each once, in order
        for j, c in enumerate(tracked.map.copy_of):
            if c is not None:
                assert new_lines[j] == old_lines[c]


# ---------------------------------------------------------------- the hover on top of it


RESULT = FileResult(
    "k.py",
    (
        LaunchResult(
            "k",
            1,
            {},
            "analyzed",
            (Access("load", 3, 1, "x_ptr", "fp32", True, ((0, 16),), True, view_numel=16, touched=16, element_size=4),),
            grid=(1,),
        ),
    ),
)


def test_a_moved_access_line_shows_its_footprint_and_where_it_was():
    t = follow(TEXT, change(0, 0, 0, 0, "# new\n"))
    text = hover.hover_after_edits(RESULT, "k.py", TEXT, t.map, 4, "version 1, saved at 10:00:00")
    assert "`x_ptr`" in text and "on line 4" in text and "this was line 3" in text


def test_the_line_that_took_an_access_lines_place_shows_nothing():
    t = follow(TEXT, change(0, 0, 0, 0, "# new\n"))
    assert hover.hover_after_edits(RESULT, "k.py", TEXT, t.map, 3, "v1") is None


def test_an_edited_access_line_says_stale_and_which_version():
    t = follow(TEXT, change(2, 5, 2, 6, "y"))
    text = hover.hover_after_edits(RESULT, "k.py", TEXT, t.map, 3, "version 1, saved at 10:00:00")
    assert "stale" in text and "version 1, saved at 10:00:00" in text and "`x_ptr`" not in text


def test_an_edited_line_without_an_access_shows_nothing():
    t = follow(TEXT, change(0, 0, 0, 1, "z"))
    assert hover.hover_after_edits(RESULT, "k.py", TEXT, t.map, 1, "v1") is None


# -- verdicts on the analysed text placed on the buffer (linemap.placer, convert.onto_buffer)


def _diag(line: int, start: int, end: int, related_line: int | None = None, uri: str = "file:///k.py"):
    from lsprotocol import types

    related = None
    if related_line is not None:
        where = types.Range(types.Position(related_line, 0), types.Position(related_line, 4))
        related = [types.DiagnosticRelatedInformation(types.Location(uri, where), "called here")]
    return types.Diagnostic(
        range=types.Range(types.Position(line, start), types.Position(line, end)),
        message="out-of-bounds load",
        code="TL001",
        related_information=related,
    )


def test_placer_follows_copies_edits_and_deletions():
    t = linemap.resync(linemap.start(TEXT), "new\na = 1\nload(x) # typed\nc = 3\n")  # b deleted, load edited
    where = linemap.placer(t.map)
    assert where(0) == (1, True)  # a copy, one line down
    assert where(2) == (2, False)  # edited into line 2
    assert where(1)[1] is False and where(1)[0] in (2, 3)  # deleted: a line after it
    assert where(3) == (3, True)


def test_onto_buffer_moves_a_verdict_with_its_statement_and_says_when_its_line_changed():
    from tilelens_lsp.lsp import convert

    same = linemap.start(TEXT)
    d = _diag(2, 0, 7)
    assert convert.onto_buffer([d], "file:///k.py", same) == [d]  # nothing unsaved: untouched
    moved = linemap.resync(same, "x = 0\ny = 0\n" + TEXT)
    (out,) = convert.onto_buffer([_diag(2, 0, 7, related_line=0)], "file:///k.py", moved)
    assert (out.range.start.line, out.range.start.character, out.range.end.character) == (4, 0, 7)
    assert out.message == "out-of-bounds load" and out.code == "TL001"
    assert out.related_information[0].location.range.start.line == 2  # the related line moved too
    commented = linemap.resync(same, TEXT.replace("load(x)", "load(x)  # later"))
    (kept,) = convert.onto_buffer([_diag(2, 0, 7)], "file:///k.py", commented)
    assert (kept.range.start.line, kept.range.end.character) == (2, 7) and kept.message.endswith(convert.CHANGED_SINCE)
    rewritten = linemap.resync(same, TEXT.replace("load(x)", "store(y, 1)"))
    (whole,) = convert.onto_buffer([_diag(2, 0, 7)], "file:///k.py", rewritten)
    assert (whole.range.start.character, whole.range.end.character) == (0, len("store(y, 1)"))
    assert whole.message.endswith(convert.CHANGED_SINCE)
