"""`tilelens-lsp capture -- COMMAND`: launches recorded from a real run, written as toml launch tables.

Runs COMMAND (a test suite, a training step) with `capture/hook.py` loaded into its Python processes,
then turns the launches they recorded into `[[launch]]` tables of a `tilelens.toml`: every tensor as
its exact view (dtype, shape, strides, storage offset and size), integer tensors with the value range
the run saw (`.values(LO, HI)`), scalars as launched, the grid as launched (an autotuned kernel keeps
its grid lambda, so the checker expands every config). Launches that would check alike are written
once, and at most `--per-kernel` per kernel, most distinct first. COMMAND's own input, output and
exit status pass through untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

HOOK_MODULE = "_tilelens_capture_hook"
SITECUSTOMIZE = f'''"""tilelens-lsp capture: records Triton launches, then runs the environment's own sitecustomize."""
import importlib.machinery as _machinery
import importlib.util as _util
import sys as _sys
import {HOOK_MODULE} as _hook
_hook.install()
_here = __file__.rsplit("/", 1)[0].rstrip("/")
_spec = _machinery.PathFinder.find_spec("sitecustomize", [p for p in _sys.path if p.rstrip("/") != _here])
if _spec is not None and _spec.loader is not None:
    _module = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
'''


@dataclass
class Captured:
    tables: list[dict] = field(default_factory=list)
    launches: int = 0          # launches recorded
    duplicates: int = 0        # ... that would check like one already kept
    capped: int = 0            # ... past the per-kernel cap
    skipped: list[str] = field(default_factory=list)   # why some could not be written


def run(command: list[str], out: Path, merge: bool, per_kernel: int) -> int:
    """Run `command` under the hook; write what it launched to `out`. Returns the command's status."""
    if out.exists() and not merge:
        print(f"tilelens-lsp capture: {out} exists; pass --merge to add to it", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="tilelens-capture-"))
    try:
        hook_dir, records = work / "hook", work / "records"
        hook_dir.mkdir()
        records.mkdir()
        shutil.copy(Path(__file__).with_name("hook.py"), hook_dir / f"{HOOK_MODULE}.py")
        (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(hook_dir)] + [p for p in [env.get("PYTHONPATH", "")] if p])
        env["TILELENS_CAPTURE_DIR"] = str(records)
        try:
            status = subprocess.call(command, env=env)
        except OSError as exc:
            print(f"tilelens-lsp capture: cannot run {command[0]}: {exc}", file=sys.stderr)
            return 2
        lines = []
        for path in sorted(records.glob("*.jsonl")):
            lines += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    captured = tables(lines, out.resolve().parent, per_kernel)
    written = write(out, captured.tables, merge)
    print(f"tilelens-lsp capture: {captured.launches} launch(es) recorded, {written} written to {out} "
          f"({captured.duplicates} duplicate(s), {captured.capped} past the cap of {per_kernel} per kernel)",
          file=sys.stderr)
    for why in captured.skipped[:10]:
        print(f"tilelens-lsp capture: not written: {why}", file=sys.stderr)
    return status


# ---------------------------------------------------------------- records → launch tables


def tables(records: list[dict], root: Path, per_kernel: int) -> Captured:
    out = Captured()
    seen: set[tuple] = set()
    per: dict[tuple, int] = {}
    for rec in records:
        out.launches += 1
        try:
            where, table = _table(rec, root)
        except ValueError as exc:
            out.skipped.append(f"{rec.get('kernel')}: {exc}")
            continue
        key = (where, table["launch"], table.get("let", ""))
        if key in seen:
            out.duplicates += 1
            continue
        seen.add(key)
        kernel = (where, rec["kernel"])
        if per.get(kernel, 0) >= per_kernel:
            out.capped += 1
            continue
        per[kernel] = per.get(kernel, 0) + 1
        out.tables.append(table)
    return out


def _table(rec: dict, root: Path) -> tuple[str, dict]:
    table: dict = {}
    file = Path(rec["file"])
    try:
        table["file"] = file.resolve().relative_to(root).as_posix()
        where = table["file"]
    except ValueError:
        if not rec.get("importable"):      # a script, or a file imported by path: name the file
            table["file"] = str(file.resolve())
            where = table["file"]
        else:          # a kernel of an installed package
            table["module"] = rec["module"]
            where = rec["module"]
    grid, let = _grid(rec["grid"], rec.get("wrapped", False))
    args = [_spec(a) for a in rec["args"]]
    args += [f"{name}={_spec(a)}" for name, a in rec["kwargs"].items()]
    if let:
        table["let"] = "; ".join(f"{k} = {v}" for k, v in sorted(let.items()))
    table["launch"] = f"{rec['kernel']}[{grid}]({', '.join(args)})"
    return where, table


def _grid(grid: dict, wrapped: bool) -> tuple[str, dict]:
    if wrapped and "lambda" in grid:        # an autotuner's grid reads the config: keep the lambda
        return grid["lambda"], dict(grid.get("names", {}))
    if "dims" in grid:
        return "(" + "".join(f"{int(d)}, " for d in grid["dims"]).rstrip(" ") + ")", {}
    if "lambda" in grid:
        return grid["lambda"], dict(grid.get("names", {}))
    raise ValueError("its grid is neither dims nor a lambda the directive grammar can read")


def _spec(arg: dict) -> str:
    if "tensor" in arg:
        return _tensor(arg["tensor"])
    if "dtype" in arg:       # a dtype-valued constexpr, written as the directive's dtype name
        return str(arg["dtype"])
    if "descriptor" in arg:  # a host-side TensorDescriptor over the view it describes
        d = arg["descriptor"]
        block = ", ".join(str(int(b)) for b in d["block"]) + ("," if len(d["block"]) == 1 else "")
        padding = "" if d.get("padding", "zero") == "zero" else f", padding={json.dumps(d['padding'])}"
        return f"descriptor({_tensor(d['tensor'])}, block=({block}){padding})"
    if "tuple" in arg:
        items = [_spec(a) for a in arg["tuple"]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    value = arg["scalar"]
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    raise ValueError(f"an argument the directive grammar cannot write: {value!r}")


def _tensor(t: dict) -> str:
    shape, strides = [int(s) for s in t["shape"]], [int(s) for s in t["strides"]]
    dims = ", ".join(map(str, shape))
    contiguous, step = [], 1
    for n in reversed(shape):
        contiguous.insert(0, step)
        step *= max(n, 1)
    numel = 1
    for n in shape:
        numel *= n
    values = t.get("values")
    if strides == contiguous and t["offset"] == 0 and t["storage"] == numel and shape:
        text = f"{t['dtype']}[{dims}]"
        return text + (f".values({values[0]}, {values[1]})" if values else "")
    parts = [t["dtype"], f"({dims}{',' if len(shape) == 1 else ''})",
             f"strides=({', '.join(map(str, strides))}{',' if len(strides) == 1 else ''})",
             f"offset={t['offset']}", f"storage={t['storage']}"]
    if values:
        parts.append(f"values=({values[0]}, {values[1]})")
    return f"tensor({', '.join(parts)})"


# ---------------------------------------------------------------- the toml file


def write(out: Path, new: list[dict], merge: bool) -> int:
    """Append the tables that `out` does not hold yet (its text, comments included, is kept)."""
    existing: set[tuple] = set()
    text = ""
    if merge and out.exists():
        text = out.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SystemExit(f"tilelens-lsp capture: {out} is not valid TOML ({exc}); nothing written")
        for t in data.get("launch", []):
            existing.add((t.get("file") or t.get("module"), t.get("launch"), t.get("let", "")))
    fresh = [t for t in new if (t.get("file") or t.get("module"), t["launch"], t.get("let", "")) not in existing]
    if not fresh:
        return 0
    chunk = tomli_w.dumps({"launch": fresh})
    header = "" if text else "# Launches captured by `tilelens-lsp capture` from real runs.\n\n"
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    out.write_text(text + sep + header + chunk, encoding="utf-8")
    return len(fresh)
