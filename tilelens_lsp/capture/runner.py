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

import contextlib
import fcntl
import json
import math
import os
import shutil
import signal
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
try:     # a child that cannot load the hook (Python < 3.7) still gets its own sitecustomize below
    import {HOOK_MODULE} as _hook
    _hook.install()
except Exception:
    pass
_here = __file__.rsplit("/", 1)[0].rstrip("/")
_spec = _machinery.PathFinder.find_spec("sitecustomize", [p for p in _sys.path if p.rstrip("/") != _here])
if _spec is not None and _spec.loader is not None:
    _module = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
'''


@dataclass
class Captured:
    tables: list[dict] = field(default_factory=list)
    launches: int = 0  # launches recorded
    duplicates: int = 0  # ... that would check like one already kept
    capped: int = 0  # ... past the per-kernel cap
    skipped: list[str] = field(default_factory=list)  # why some could not be written


def run(command: list[str], out: Path, merge: bool, per_kernel: int) -> int:
    """Run `command` under the hook; write what it launched to `out`. Returns the command's status
    (128 + N when a signal N ended it), or 2 when `out` cannot be written (found before the run)."""
    problem = out_problem(out)
    if problem:
        print(f"tilelens-lsp capture: {problem}; nothing was run", file=sys.stderr)
        return 2
    if out.exists() and not merge:
        print(f"tilelens-lsp capture: {out} exists; pass --merge to add to it", file=sys.stderr)
        return 2
    existed = out.exists()
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
        env["TILELENS_CAPTURE_PER_KERNEL"] = str(HOOK_KEEP * per_kernel)
        status = run_forwarding_signals(command, env)
        if status is None:
            return 2
        lines = []
        for path in sorted(records.glob("*.jsonl")):
            lines += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summaries = [rec["summary"] for rec in lines if "summary" in rec]
    launches = [rec for rec in lines if "summary" not in rec]
    captured = tables(launches, out.resolve().parent, per_kernel)
    for summary in summaries:  # what each process's hook already dropped as it recorded
        captured.launches += summary.get("duplicates", 0) + summary.get("capped", 0)
        captured.duplicates += summary.get("duplicates", 0)
        captured.capped += summary.get("capped", 0)
    appeared = not existed and out.exists()
    try:
        written = write(out, captured.tables, merge)
    except (OSError, ValueError) as exc:
        print(f"tilelens-lsp capture: could not write {out}: {exc}", file=sys.stderr)
        return 2
    if appeared:
        print(f"tilelens-lsp capture: {out} was written by another capture meanwhile: merged into it", file=sys.stderr)
    print(
        f"tilelens-lsp capture: {captured.launches} launch(es) recorded, {written} written to {out} "
        f"({captured.duplicates} duplicate(s), {captured.capped} past the cap of {per_kernel} per kernel)",
        file=sys.stderr,
    )
    skipped_values = sum(1 for rec in launches if rec.get("values_skipped"))
    if skipped_values:
        print(
            f"tilelens-lsp capture: value ranges not recorded for {skipped_values} launch(es) made while a CUDA "
            "stream was capturing a graph (reading them would break the capture)",
            file=sys.stderr,
        )
    for why in captured.skipped[:10]:
        print(f"tilelens-lsp capture: not recorded: {why}", file=sys.stderr)
    if len(captured.skipped) > 10:
        print(f"tilelens-lsp capture: ... and {len(captured.skipped) - 10} more not recorded", file=sys.stderr)
    return status


HOOK_KEEP = 4  # the hook keeps up to this many times --per-kernel distinct launches per kernel
FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def out_problem(out: Path) -> str | None:
    """Why `out` cannot be written (checked before the run, so no launch is recorded in vain)."""
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        return f"{out} is a folder"
    if not folder.is_dir():
        return f"the folder of {out} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder of {out} is not writable"
    if out.exists() and not os.access(out, os.R_OK | os.W_OK):
        return f"{out} is not readable and writable"
    return None


def run_forwarding_signals(command: list[str], env: dict[str, str]) -> int | None:
    """Run `command` to its end as a shell would: Ctrl-C (which the terminal sends the whole process
    group) is left to the command, SIGTERM/SIGHUP/SIGQUIT are passed on to it, and capture waits for
    it either way. Its status, 128 + N for a death by signal N; None if it could not start."""
    try:
        proc = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"tilelens-lsp capture: cannot run {command[0]}: {exc}", file=sys.stderr)
        return None

    def forward(signum, _frame) -> None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    saved = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    for signum in FORWARDED:
        saved[signum] = signal.signal(signum, forward)
    try:
        code = proc.wait()
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    return 128 - code if code < 0 else code


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
            why = f"{rec.get('kernel')}: {exc}"
            if why not in out.skipped:
                out.skipped.append(why)
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
    if rec.get("unlocatable"):
        raise ValueError(f"({Path(rec['file']).name}) {rec['unlocatable']}")
    if rec.get("unrecordable"):
        raise ValueError(rec["unrecordable"])
    table: dict = {}
    file = Path(rec["file"]).resolve()
    if rec.get("importable") and any(p in ("site-packages", "dist-packages") for p in file.parts):
        table["module"] = rec["module"]  # a kernel of an installed package: found where it is installed
        where = rec["module"]
    else:  # the user's own file (imported or not): by path, relative to the toml (`file =`)
        table["file"] = Path(os.path.relpath(file, root)).as_posix() if file.anchor == root.anchor else str(file)
        where = table["file"]
    grid, let = _grid(rec["grid"], rec.get("wrapped", False))
    args = [spec_text(a) for a in rec["args"]]
    args += [f"{name}={spec_text(a)}" for name, a in rec["kwargs"].items()]
    if let:
        table["let"] = "; ".join(f"{k} = {v}" for k, v in sorted(let.items()))
    table["launch"] = f"{rec['kernel']}[{grid}]({', '.join(args)})"
    return where, table


def _grid(grid: dict, wrapped: bool) -> tuple[str, dict]:
    if wrapped and "lambda" in grid:  # an autotuner's grid reads the config: keep the lambda
        return grid["lambda"], dict(grid.get("names", {}))
    if "dims" in grid:
        return "(" + "".join(f"{int(d)}, " for d in grid["dims"]).rstrip(" ") + ")", {}
    if "lambda" in grid:
        return grid["lambda"], dict(grid.get("names", {}))
    raise ValueError("its grid is neither dims nor a lambda the directive grammar can read")


def spec_text(arg: dict) -> str:
    if "tensor" in arg:
        return _tensor(arg["tensor"])
    if "dtype" in arg:  # a dtype-valued constexpr, written as the directive's dtype name
        return str(arg["dtype"])
    if "descriptor" in arg:  # a host-side TensorDescriptor over the view it describes
        d = arg["descriptor"]
        block = ", ".join(str(int(b)) for b in d["block"]) + ("," if len(d["block"]) == 1 else "")
        padding = "" if d.get("padding", "zero") == "zero" else f", padding={json.dumps(d['padding'])}"
        return f"descriptor({_tensor(d['tensor'])}, block=({block}){padding})"
    if "tuple" in arg:
        items = [spec_text(a) for a in arg["tuple"]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    value = arg["scalar"]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"a {value} scalar, which the directive grammar cannot write")
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    raise ValueError(f"an argument the directive grammar cannot write: {value!r}")


def _tensor(t: dict) -> str:
    shape, strides = [int(s) for s in t["shape"]], [int(s) for s in t["strides"]]
    dims = ", ".join(map(str, shape))
    contiguous: list[int] = []
    step = 1
    for n in reversed(shape):
        contiguous.insert(0, step)
        step *= max(n, 1)
    numel = 1
    for n in shape:
        numel *= n
    values = t.get("values")
    if strides == contiguous and t["offset"] == 0 and t["storage"] == numel and shape:
        text = f"{t['dtype']}[{dims}]"
        return text + (f".values({values_text(values)})" if values else "")
    parts = [
        t["dtype"],
        f"({dims}{',' if len(shape) == 1 else ''})",
        f"strides=({', '.join(map(str, strides))}{',' if len(strides) == 1 else ''})",
        f"offset={t['offset']}",
        f"storage={t['storage']}",
    ]
    if values:
        parts.append(f"values={values_text(values, pair=True)}")
    return f"tensor({', '.join(parts)})"


def values_text(values: list, pair: bool = False) -> str:
    """A recorded value set as the grammar writes it: `LO, HI` (or `(LO, HI)`), or a list of its parts."""
    if values and isinstance(values[0], list):
        items = [str(lo) if hi == lo + 1 else f"({lo}, {hi})" for lo, hi in values]
        return "[" + ", ".join(items) + "]"
    return f"({values[0]}, {values[1]})" if pair else f"{values[0]}, {values[1]}"


# ---------------------------------------------------------------- the toml file


def write(out: Path, new: list[dict], merge: bool) -> int:
    """Add the tables that `out` does not hold yet (its text, comments included, is kept), as
    `[[launch]]` tables, under a lock on the folder (two captures to one file both land), and only
    after the new text reads back with every table; the file is replaced whole, never half-written."""
    with _folder_lock(out.parent if str(out.parent) else Path(".")):
        existing: set[tuple] = set()
        text, count = "", 0
        if out.exists():
            text = out.read_text(encoding="utf-8")
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise SystemExit(f"tilelens-lsp capture: {out} is not valid TOML ({exc}); nothing written")
            count = len(data.get("launch", []))
            for t in data.get("launch", []):
                existing.add((t.get("file") or t.get("module"), t.get("launch"), t.get("let", "")))
        fresh = [t for t in new if (t.get("file") or t.get("module"), t["launch"], t.get("let", "")) not in existing]
        if not fresh:
            return 0
        chunk = "\n".join(_table_text(t) for t in fresh)
        header = "" if text else "# Launches captured by `tilelens-lsp capture` from real runs.\n\n"
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        result = text + sep + header + chunk
        if len(tomllib.loads(result).get("launch", [])) != count + len(fresh):
            raise ValueError("the merged text does not read back with every launch table; nothing written")
        _replace(out, result)
    return len(fresh)


def _table_text(table: dict) -> str:
    """One `[[launch]]` table (tomli_w writes an array of tables inline, which a second array breaks)."""
    return "[[launch]]\n" + "".join(tomli_w.dumps({key: value}) for key, value in table.items())


def _replace(out: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=f".{out.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if out.exists():
            os.chmod(tmp, out.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def _folder_lock(folder: Path):
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
