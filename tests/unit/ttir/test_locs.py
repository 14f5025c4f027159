"""Portable locs: every TTIR loc form resolves to a stack, innermost first, with portable paths."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import triton

from tests.support import FIXTURES, launch_at, line_of, only
from tilelens_lsp.model import Frame
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.ttir.locs import LocTable, PathMapper, default_mapper, portable_stack, portable_ttir

K = "/ws/kernels/add.py"
H = "/ws/lib/helpers.py"

TTIR = f"""\
#loc = loc("{K}":10:1)
#loc1 = loc("{K}":12:9)
#loc2 = loc("{H}":4:20)
#loc3 = loc("{K}":14:5)
#loc4 = loc("x"(#loc3))
#loc5 = loc(callsite(#loc2 at #loc4))
#loc6 = loc("{H}":8:3)
#loc7 = loc(callsite(#loc6 at callsite(#loc2 at #loc3)))
#loc8 = loc(callsite(callsite(#loc6 at #loc2) at #loc3))
#loc9 = loc(fused[#loc1, #loc3])
#loc10 = loc(fused<"tag">[#loc99, #loc3])
#loc11 = loc(#loc12)
#loc12 = loc(#loc11)
#loc13 = loc("{K}":20:7 to 20:15)
module {{
}} loc(#loc)
"""


@pytest.fixture(scope="module")
def table():
    return LocTable(TTIR)


def test_alias_resolves_to_its_file_loc(table):
    assert table.resolve("#loc1") == ((K, 12, 9),)


def test_inline_file_loc_resolves_without_an_alias(table):
    assert table.resolve(f'"{K}":3:4') == ((K, 3, 4),)


def test_loc_wrapper_is_transparent(table):
    assert table.resolve("loc(#loc1)") == ((K, 12, 9),)


def test_named_loc_resolves_to_the_loc_it_names(table):
    assert table.resolve('"x"(#loc3)') == ((K, 14, 5),)


def test_named_alias_resolves_through_both_levels(table):
    assert table.resolve("#loc4") == ((K, 14, 5),)


def test_callsite_is_callee_then_caller(table):
    assert table.resolve("#loc5") == ((H, 4, 20), (K, 14, 5))


def test_callsite_nested_on_the_caller_side_is_innermost_first(table):
    assert table.resolve("#loc7") == ((H, 8, 3), (H, 4, 20), (K, 14, 5))


def test_callsite_nested_on_the_callee_side_is_innermost_first(table):
    assert table.resolve("#loc8") == ((H, 8, 3), (H, 4, 20), (K, 14, 5))


def test_fused_loc_takes_its_first_known_part(table):
    assert table.resolve("#loc9") == ((K, 12, 9),)


def test_fused_loc_with_metadata_skips_unknown_parts(table):
    assert table.resolve("#loc10") == ((K, 14, 5),)


def test_file_loc_with_a_range_keeps_its_start(table):
    assert table.resolve("#loc13") == ((K, 20, 7),)


def test_unknown_alias_resolves_to_an_empty_stack(table):
    assert table.resolve("#loc99") == ()


def test_unknown_loc_form_resolves_to_an_empty_stack(table):
    assert table.resolve("unknown") == ()


def test_alias_cycle_resolves_to_an_empty_stack_instead_of_recursing(table):
    assert table.resolve("#loc11") == ()


# ---------------------------------------------------------------- PathMapper


@pytest.fixture
def mapper(tmp_path: Path) -> PathMapper:
    return PathMapper(str(tmp_path / "ws"), str(tmp_path / "site" / "triton"))


def test_workspace_file_becomes_workspace_relative(mapper, tmp_path: Path):
    assert mapper.portable(str(tmp_path / "ws" / "kernels" / "add.py")) == "kernels/add.py"


def test_triton_file_becomes_triton_prefixed(mapper, tmp_path: Path):
    assert mapper.portable(str(tmp_path / "site" / "triton" / "language" / "core.py")) == "triton/language/core.py"


def test_other_file_becomes_its_bare_name(mapper):
    assert mapper.portable("/somewhere/else/helpers.py") == "helpers.py"


def test_sibling_folder_with_the_workspace_name_as_prefix_is_not_inside_it(mapper, tmp_path: Path):
    assert mapper.portable(str(tmp_path / "ws2" / "k.py")) == "k.py"


def test_relative_path_is_kept_with_forward_slashes(mapper):
    assert mapper.portable(os.path.join("kernels", "add.py")) == "kernels/add.py"


def test_workspace_file_reached_through_a_symlink_is_workspace_relative(tmp_path: Path):
    (tmp_path / "ws" / "k").mkdir(parents=True)
    (tmp_path / "ws" / "k" / "a.py").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    assert PathMapper(str(tmp_path / "ws"), None).portable(str(tmp_path / "link" / "k" / "a.py")) == "k/a.py"


def test_a_mapper_remembers_its_answers_and_a_new_mapper_sees_a_moved_link(tmp_path: Path):
    for name in ("ws", "other"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    linked = str(tmp_path / "link" / "a.py")
    first = PathMapper(str(tmp_path), None)
    before = (repr(first), hash(first))
    assert first.portable(linked) == "ws/a.py"
    # what it remembers is no part of its identity: result keys hash the mapper's repr
    assert (repr(first), hash(first)) == before and first == PathMapper(str(tmp_path), None)
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "other")
    assert PathMapper(str(tmp_path), None).portable(linked) == "other/a.py"  # one analysis, one mapper
    assert first.portable(linked) == "ws/a.py"


def test_default_mapper_knows_tritons_installation():
    core = Path(triton.__file__).parent / "language" / "core.py"
    assert default_mapper(None).portable(str(core)) == "triton/language/core.py"


def test_installed_roots_follow_sys_path(tmp_path: Path, monkeypatch):
    """Kept for one sys.path, asked again for another: a folder put on sys.path is a root at once."""
    from tilelens_lsp.ttir.locs import installed_roots

    before = installed_roots()
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    assert os.path.realpath(site) in installed_roots()
    assert os.path.realpath(site) not in before
    monkeypatch.undo()
    assert installed_roots() == before


def test_portable_stack_maps_every_frame(mapper, tmp_path: Path):
    raw = ((str(tmp_path / "ws" / "h.py"), 4, 2), ("/elsewhere/k.py", 9, 1))
    assert portable_stack(raw, mapper) == (Frame("h.py", 4, 2), Frame("k.py", 9, 1))


def test_portable_ttir_rewrites_every_quoted_path(mapper, tmp_path: Path):
    text = f'#loc = loc("{tmp_path}/ws/a.py":1:2)\n#loc1 = loc("/x/b.py":3:4)'
    assert portable_ttir(text, mapper) == '#loc = loc("a.py":1:2)\n#loc1 = loc("b.py":3:4)'


# ---------------------------------------------------------------- through a real compile

HELPER_CALLS = FIXTURES / "helper_calls.py"
HELPERS = FIXTURES / "jit_helpers.py"


@pytest.fixture(scope="module")
def helper_result():
    return analyze_path(HELPER_CALLS, FIXTURES)


def test_helper_in_another_file_has_its_frame_first_then_the_call_site(helper_result):
    diag = only(launch_at(helper_result, line_of(HELPER_CALLS, "copy_via_helpers[")), "TL001")
    assert diag.stack == (
        Frame("jit_helpers.py", line_of(HELPERS, "tl.store(ptr + offs, value)"), 5),
        Frame("helper_calls.py", line_of(HELPER_CALLS, "    store_block(out_ptr, offs, x)"), 5),
    )


def test_helper_called_through_a_helper_keeps_every_call_site_innermost_first(helper_result):
    diag = only(launch_at(helper_result, line_of(HELPER_CALLS, "copy_nested[")), "TL001")
    assert [(f.path, f.line) for f in diag.stack] == [
        ("jit_helpers.py", line_of(HELPERS, "tl.store(ptr + offs, value)")),
        ("helper_calls.py", line_of(HELPER_CALLS, "store_block(out_ptr, offs, load_block(x_ptr, offs))")),
        ("helper_calls.py", line_of(HELPER_CALLS, "    copy_block(x_ptr, out_ptr, offs)")),
    ]


def test_verdict_position_is_the_innermost_frame(helper_result):
    diag = only(launch_at(helper_result, line_of(HELPER_CALLS, "copy_nested[")), "TL001")
    assert (diag.line, diag.column) == (diag.stack[0].line, diag.stack[0].column)


def test_every_frame_of_a_real_compile_is_portable(helper_result):
    frames = [f for launch in helper_result.launches for d in launch.diagnostics for f in d.stack]
    assert frames and all(not os.path.isabs(f.path) for f in frames)
