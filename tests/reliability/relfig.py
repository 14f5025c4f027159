"""Figures the reliability tests measure, printed as one line at the end of the session (conftest.py).

Each test records what it tried and what survived under its own key; `summary()` joins them in a
fixed order so CI output can be compared run to run, and docs/reliability.md quotes them.
"""

from __future__ import annotations

from typing import Any

FIGURES: dict[str, dict[str, Any]] = {}

ORDER = (
    "fuzz",
    "grids",
    "faults",
    "bigfile",
    "binary",
    "garbage",
    "workspace",
    "cache",
    "safety",
    "isolation",
    "cachekey",
    "lines",
    "prefix",
    "capture",
    "tcp",
    "outside",
    "resources",
)


def record(key: str, **values: Any) -> None:
    FIGURES.setdefault(key, {}).update(values)


def bump(key: str, name: str, by: int = 1) -> None:
    entry = FIGURES.setdefault(key, {})
    entry[name] = entry.get(name, 0) + by


def _fmt(key: str, f: dict[str, Any]) -> str:
    if key == "fuzz":
        codes = ",".join(f"{c}:{n}" for c, n in sorted(f.get("codes", {}).items()))
        return (
            f"fuzz {f.get('examples', 0)} files / {f.get('directives', 0)} directives / "
            f"{f.get('launches', 0)} launches ({f.get('exceptions', 0)} exceptions, "
            f"slowest {f.get('slowest', 0):.1f} s; {codes})"
        )
    if key == "grids":
        return f"enormous grids {f.get('answered', 0)}/{f.get('tried', 0)} answered (slowest {f.get('slowest', 0):.1f} s)"
    if key == "faults":
        return f"faults {f.get('injected', 0)} injected / {f.get('survived', 0)} survived"
    if key == "bigfile":
        return (
            f"big file {f.get('lines', 0)} lines / {f.get('kernels', 0)} kernels / {f.get('kb', 0)} KB: "
            f"diagnostics in {f.get('seconds', 0):.1f} s, hover in {f.get('hover_ms', 0):.0f} ms"
        )
    if key == "binary":
        return f"binary files {f.get('survived', 0)}/{f.get('tried', 0)} survived"
    if key == "garbage":
        return (
            f"protocol garbage {f.get('recovered', 0)}/{f.get('tried', 0)} recovered (answered again within "
            f"{f.get('worst_resync', 0)} request(s); {f.get('stderr_lines', 0)} stderr lines, "
            f"{f.get('tracebacks', 0)} tracebacks)"
        )
    if key == "workspace":
        return (
            f"workspace {f.get('files', 0)} files unchanged after {f.get('sessions', 0)} LSP session(s) "
            f"+ {f.get('checks', 0)} check run(s)"
        )
    if key == "cache":
        return (
            f"cache {f.get('corrupted', 0)} corrupt entries ignored, results identical: "
            f"{f.get('identical', False)}, .tmp files left: {f.get('tmp_left', 0)}"
        )
    if key == "safety":
        return (
            f"safety {f.get('payloads', 0)} code-execution payloads in {f.get('positions', 0)} positions, "
            f"{f.get('markers', 0)} markers created"
        )
    if key == "isolation":
        return (
            f"isolation {f.get('stdlib_names', 0)} stdlib-named workspace files never imported, "
            f"{f.get('buggy', 0)} TL001 kept across {f.get('leaks', 0)} leaking modules, "
            f"1 GiB of stderr grew the parent by {f.get('parent_growth_mb', '?')} MB, "
            f"30,000-line directive scan {f.get('scanner_30k_s', '?')} s (4x lines: "
            f"{f.get('scanner_ratio', '?')}x work)"
        )
    if key == "cachekey":
        return f"cache key {len(f.get('kinds', ()))} kinds of dependency change the verdict"
    return f"{key} " + ", ".join(f"{name} {value}" for name, value in sorted(f.items()))


def summary() -> str | None:
    parts = [_fmt(k, FIGURES[k]) for k in ORDER if k in FIGURES]
    parts += [_fmt(k, v) for k, v in FIGURES.items() if k not in ORDER]
    return "reliability: " + "; ".join(parts) if parts else None
