"""The result cache's key covers every value the compiled TTIR depends on (issue 14, item 4).

Each test analyses a kernel, changes one thing the kernel depends on *outside its own file* (or the
release, or the target), analyses again in the same process, and must see the new verdict rather
than the cached one. In process, with one `WarmState` for the whole module (a worker's memory), and
no bytecode written (a same-second rewrite of a helper must not be served from a stale .pyc).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import relfig

from tilelens_lsp import pipeline
from tilelens_lsp.settings import Settings


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    (tmp_path / "pyproject.toml").touch()
    return tmp_path


STATE = pipeline.WarmState(imports=pipeline.Imports(reuse=True))  # a warm worker's memory, as the worker makes it


def verdict(path: Path, root: Path, **settings) -> list[str]:
    result = pipeline.analyze_path(path, root, Settings(**settings), state=STATE)
    return sorted(d.code for d in result.all_diagnostics())


def counters() -> tuple[int, int]:
    s = STATE.stats
    return s.compiles, s.cache_hits


HEAD = "import triton\nimport triton.language as tl\n"
LAUNCH = "# tilelens: k[(1,)](fp32[64])\n"


def kernel(imports: str, params: str, offset: str) -> str:
    """A kernel that stores 64 lanes at `offs + <offset>` into 64 elements: in bounds iff the offset is 0."""
    return (
        HEAD
        + imports
        + "\n"
        + LAUNCH
        + src(f"""
        @triton.jit
        def k(x_ptr{params}):
            offs = tl.arange(0, 64)
            tl.store(x_ptr + {offset}, 1.0)
    """)
    )


CASES = {
    # kind: (kernel file, helper module before, helper module after)
    "module attribute (helpers.SHIFT)": (
        kernel("import tl_dep_helpers\n", "", "offs + tl_dep_helpers.SHIFT"),
        "SHIFT = 0\n",
        "SHIFT = 16\n",
    ),
    "imported @triton.jit helper": (
        kernel("from tl_dep_helpers import shifted\n", "", "shifted(offs)"),
        HEAD + "@triton.jit\ndef shifted(o):\n    return o\n",
        HEAD + "@triton.jit\ndef shifted(o):\n    return o + 16\n",
    ),
    "constexpr default": (
        kernel("import tl_dep_helpers\n", ", SHIFT: tl.constexpr = tl_dep_helpers.DEFAULT", "offs + SHIFT"),
        "DEFAULT = 0\n",
        "DEFAULT = 16\n",
    ),
    "tl.constexpr global read by a @triton.jit helper": (
        kernel("from tl_dep_helpers import shifted\n", "", "shifted(offs)"),
        HEAD + "SHIFT = tl.constexpr(0)\n@triton.jit\ndef shifted(o):\n    return o + SHIFT\n",
        HEAD + "SHIFT = tl.constexpr(16)\n@triton.jit\ndef shifted(o):\n    return o + SHIFT\n",
    ),
    "module attribute read by a @triton.jit helper": (
        kernel("from tl_dep_helpers import shifted\n", "", "shifted(offs)"),
        HEAD + "import tl_dep_cfg\n@triton.jit\ndef shifted(o):\n    return o + tl_dep_cfg.SHIFT\n",
        None,
    ),  # the helper stays; tl_dep_cfg.py changes
}


# Before: Triton's cache_key (the sources, tl.constexpr globals) was the only dependency in the key,
# so a changed `helpers.SHIFT` (or one a helper reads) was answered from the cache: a stale verdict.
@pytest.mark.parametrize("kind", list(CASES))
def test_changing_what_the_kernel_depends_on_changes_the_verdict(ws: Path, kind: str):
    body, before, after = CASES[kind]
    (ws / "kern.py").write_text(body)
    (ws / "tl_dep_helpers.py").write_text(before)
    (ws / "tl_dep_cfg.py").write_text("SHIFT = 0\n")
    assert verdict(ws / "kern.py", ws) == []
    if after is None:
        (ws / "tl_dep_cfg.py").write_text("SHIFT = 16\n")
    else:
        (ws / "tl_dep_helpers.py").write_text(after)
    assert verdict(ws / "kern.py", ws) == ["TL001"]
    relfig.FIGURES.setdefault("cachekey", {}).setdefault("kinds", set()).add(kind)


def test_nothing_changed_is_a_cache_hit(ws: Path):
    """The key is stable: the dependencies' values are read the same way each time."""
    body, before, _ = CASES["module attribute read by a @triton.jit helper"]
    (ws / "kern.py").write_text(body)
    (ws / "tl_dep_helpers.py").write_text(before)
    (ws / "tl_dep_cfg.py").write_text("SHIFT = 0\n")
    verdict(ws / "kern.py", ws)
    compiles, hits = counters()
    assert verdict(ws / "kern.py", ws) == []
    assert counters() == (compiles, hits + 1)


def test_another_triton_release_is_never_served_from_the_cache(ws: Path, monkeypatch):
    (ws / "kern.py").write_text(kernel("", "", "offs"))
    verdict(ws / "kern.py", ws)
    compiles, _ = counters()
    monkeypatch.setattr(pipeline.launch, "triton_version", lambda: "99.0.0")  # where the key reads it
    verdict(ws / "kern.py", ws)
    assert counters()[0] == compiles + 1
    relfig.FIGURES.setdefault("cachekey", {}).setdefault("kinds", set()).add("triton release")


FP8 = (
    HEAD
    + "# tilelens: k[(1,)](fp8e4nv[64], fp32[64], BLOCK=64)\n"
    + src("""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))
""")
)  # fp8e4nv compiles for cuda:89, and is a compile error (TL010) for cuda:80


@pytest.mark.parametrize("order", [("cuda:89", "cuda:80"), ("cuda:80", "cuda:89")])
def test_the_target_is_in_the_key(ws: Path, order):
    (ws / "fp8.py").write_text(FP8)
    expected = {"cuda:89": [], "cuda:80": ["TL010"]}
    for target in order:
        assert verdict(ws / "fp8.py", ws, target=target) == expected[target]
    relfig.FIGURES.setdefault("cachekey", {}).setdefault("kinds", set()).add("target")
