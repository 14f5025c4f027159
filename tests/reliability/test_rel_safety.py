"""Directives are data: no payload in any position of a launch runs code, through the CLI.

Every payload below, in every syntactic position of a comment directive (positional and keyword
argument, tensor shape, grid, grid lambda, binding, binding target, kernel name) and of a toml launch
table (`let`, `launch`), must come back as a TL020 on its own line and create no marker file. The
module itself is imported (that is the documented trust model), its directives never run.
Also: `check` analyses a kernel file outside the cwd and any workspace when it is named explicitly.
(That the server does not import documents outside its workspace folders is tested in
tests/lsp/test_runs.py.)
"""

from __future__ import annotations

import re
from pathlib import Path

import relfig
from lsp.lsphelp import ADD_BUGGY, kernel
from test_rel_workspace import check

PAYLOADS = [
    "__import__('os').system('touch {m}')",
    "open('{m}', 'w')",
    "exec(\"open('{m}', 'w')\")",
    "eval(\"open('{m}', 'w')\")",
    "compile('x', '{m}', 'exec')",
    "(lambda: open('{m}', 'w'))()",
    "[open('{m}', 'w') for _ in (1,)]",
    "{{open('{m}', 'w'): 1}}",
    "(x := open('{m}', 'w'))",
    "f\"{{open('{m}', 'w')}}\"",
    "getattr(__builtins__, 'open')('{m}', 'w')",
    "().__class__.__base__.__subclasses__()",
    "triton.cdiv.__globals__['__builtins__']['open']('{m}', 'w')",
    "cdiv.__call__(open('{m}', 'w'), 1)",
    "fp32[1].__class__.__init__.__globals__",
    "max.__self__.open('{m}', 'w')",
    "breakpoint()",
    "N.__class__('{m}')",
]

# where a payload goes in a comment directive; the kernel is `k(x_ptr, n, BLOCK)`
POSITIONS = {
    "positional arg": "k[(1,)](fp32[16], {p}, BLOCK=16)",
    "keyword arg": "k[(1,)](fp32[16], n={p}, BLOCK=16)",
    "constexpr": "k[(1,)](fp32[16], 16, BLOCK={p})",
    "tensor shape": "k[(1,)](fp32[{p}], 16, BLOCK=16)",
    "long tensor": "k[(1,)](tensor(fp32, (16,), strides=({p},)), 16, BLOCK=16)",
    "grid": "k[({p},)](fp32[16], 16, BLOCK=16)",
    "grid lambda": "k[lambda meta: ({p},)](fp32[16], 16, BLOCK=16)",
    "binding": "N = {p}",
    "kernel name": "{p}[(1,)](fp32[16], 16, BLOCK=16)",
}
TOML_POSITIONS = {
    "toml let": ("N = {p}", "k[(1,)](fp32[16], 16, BLOCK=16)"),
    "toml launch": ("", "k[(1,)](fp32[16], {p}, BLOCK=16)"),
}

KERNEL = kernel("""
    import triton
    import triton.language as tl

    N = 16

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)
""")


def test_no_directive_payload_runs_code(tmp_path: Path):
    markers = tmp_path / "markers"
    markers.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    lines, expected_lines, tables = [], [], []
    for i, payload in enumerate(PAYLOADS):
        for name, form in POSITIONS.items():
            marker = markers / f"m{i}-{name.replace(' ', '-')}"
            lines.append("# tilelens: " + form.format(p=payload.format(m=marker)))
            expected_lines.append(len(lines))
        for name, (let, launch) in TOML_POSITIONS.items():
            marker = markers / f"m{i}-{name.replace(' ', '-')}"
            let_text = let.format(p=payload.format(m=marker))
            tables.append(
                "[[launch]]\nfile = 'kern.py'\n"
                + (f"let = '''{let_text}'''\n" if let_text else "")
                + f"launch = '''{launch.format(p=payload.format(m=marker))}'''\n"
            )
    header = len(KERNEL.splitlines())
    (ws / "kern.py").write_text(KERNEL + "\n".join(lines) + "\n")
    (ws / "tilelens.toml").write_text("\n".join(tables))
    result = check(["kern.py"], ws, "off")
    assert result.returncode == 1, result.stderr
    assert list(markers.iterdir()) == []
    assert sorted(p.name for p in ws.iterdir()) == ["kern.py", "tilelens.toml"]  # nothing relative either
    # each directive is a bad launch on its own line; each toml table names its own line
    tl020 = [int(m.group(1)) for m in re.finditer(r"^kern\.py:(\d+):\d+: error: .*\[TL020\]$", result.stdout, re.M)]
    assert set(tl020) >= {header + n for n in expected_lines}, result.stdout[-3000:]
    toml_errors = re.findall(r"tilelens\.toml:\d+:\d+: .*\[TL020\]", result.stdout)
    assert len(toml_errors) >= len(PAYLOADS) * len(TOML_POSITIONS), result.stdout[-3000:]
    assert "[TL001]" not in result.stdout and "Traceback" not in result.stdout + result.stderr
    relfig.record(
        "safety",
        payloads=len(PAYLOADS),
        positions=len(POSITIONS) + len(TOML_POSITIONS),
        markers=len(list(markers.iterdir())),
    )


def test_check_analyses_a_file_outside_the_cwd_when_named(tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "add.py").write_text(ADD_BUGGY)
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "tilelens.toml").touch()
    result = check([str(elsewhere / "add.py")], cwd, "off")
    assert result.returncode == 1, result.stderr
    # named relative to the working folder, so the printed path opens from where check ran
    assert re.search(r"^\.\./elsewhere/add\.py:10:9: error: out-of-bounds load: .*\[TL001\]$", result.stdout, re.M), (
        result.stdout
    )
