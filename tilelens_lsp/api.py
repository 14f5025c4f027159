"""The Python API: `check_launch(kernel, grid, *args, **kwargs)` checks one launch without running it.

A launch given as the kernel, its grid and its arguments (torch tensors, TensorSpec objects or directive
spec strings such as `"fp32[4096]"`) is recorded with capture's own hook, written as the `[[launch]]`
table `tilelens-lsp capture` would write, and analysed in a worker process exactly as `tilelens-lsp
check` analyses that table; the verdicts come back as a `LaunchCheck`. `Recorder` (a private copy of
the hook recording into a folder of its own) also serves the pytest plugin. Nothing here runs a kernel,
imports torch or analyses in this process.
"""

from __future__ import annotations

import ast
import atexit
import importlib.util
import itertools
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tilelens_lsp import suppress
from tilelens_lsp.capture import runner
from tilelens_lsp.launches.evaluator import Evaluator
from tilelens_lsp.launches.specs import EvalError
from tilelens_lsp.launches.toml import files_in_config
from tilelens_lsp.model import Access, Diagnostic, FileResult, LaunchResult, TensorSpec, value_intervals
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import Settings, check_target, from_environment, merge
from tilelens_lsp.worker.process import IN_WORKER_VARIABLE, Worker

HOOK_SOURCE = Path(runner.__file__).with_name("hook.py")
CAPTURE_DIR_VARIABLE = "TILELENS_CAPTURE_DIR"  # where the hook writes; it reads the variable when loaded
_loads = itertools.count()


# ---------------------------------------------------------------- recording


class Recorder:
    """The capture hook loaded into this process as a module of its own, writing `<pid>.jsonl` into a
    fresh folder. `install()` makes it record every launch the process makes (the pytest plugin);
    `record()` records one launch without running it (check_launch). Each record is the hook's JSON
    line: module, file, kernel, params, grid, args, kwargs."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tilelens-record-"))
        spec = importlib.util.spec_from_file_location(f"tilelens_lsp_hook_{os.getpid()}_{next(_loads)}", HOOK_SOURCE)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the capture hook from {HOOK_SOURCE}")
        self.hook = importlib.util.module_from_spec(spec)
        saved = os.environ.get(CAPTURE_DIR_VARIABLE)
        os.environ[CAPTURE_DIR_VARIABLE] = str(self.folder)
        try:
            spec.loader.exec_module(self.hook)
        finally:  # the copy has read it; the tests' own child processes must not see it
            if saved is None:
                os.environ.pop(CAPTURE_DIR_VARIABLE, None)
            else:
                os.environ[CAPTURE_DIR_VARIABLE] = saved
        self.hook.keep_all()  # this process dedupes; each launch must reach its test

    @property
    def own_file(self) -> Path:
        return self.folder / f"{os.getpid()}.jsonl"

    def install(self) -> None:
        self.hook.install()

    def record(self, kernel, grid, args: tuple, kwargs: dict) -> dict | None:
        """The record of one launch (the hook's own), or None when `kernel` is no Triton kernel.
        Raises what the hook raises for an argument it cannot record."""
        before = self.position()
        self.hook.record(kernel, grid, tuple(args), dict(kwargs))
        lines = self.read(self.own_file, before)
        return lines[-1][1] if lines else None

    def failures(self) -> int:
        """Launches this process made that the hook could not record (an argument it cannot write)."""
        return self.hook.failures()

    def position(self) -> int:
        """How many bytes this process has recorded so far (the boundary between two tests)."""
        try:
            return self.own_file.stat().st_size
        except OSError:
            return 0

    @staticmethod
    def read(path: Path, start: int = 0) -> list[tuple[int, dict]]:
        """(byte offset, record) of each complete line of `path` from `start`."""
        try:
            data = path.read_bytes()[start:]
        except OSError:
            return []
        out, offset = [], start
        for raw in data.splitlines(keepends=True):
            if raw.endswith(b"\n") and raw.strip():
                try:
                    out.append((offset, json.loads(raw)))
                except json.JSONDecodeError:
                    pass
            offset += len(raw)
        return out

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("*.jsonl"))

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


# ---------------------------------------------------------------- records → tables → a toml to check


def table_of(record: dict, root: Path) -> tuple[dict | None, str]:
    """The `[[launch]]` table capture writes for one record with its toml in `root` (or None, and why not)."""
    captured = runner.tables([record], root, 1)
    if captured.tables:
        return captured.tables[0], ""
    return None, captured.skipped[0] if captured.skipped else "not recordable"


def table_key(table: dict) -> tuple[str, str, str]:
    """What makes two tables the same launch (capture's and its writer's notion)."""
    return (table.get("file") or table.get("module") or "", table["launch"], table.get("let", ""))


def anywhere(table: dict, root: Path) -> dict:
    """The table with its `file` absolute, so the toml holding it may live in any folder."""
    if "file" in table and not os.path.isabs(table["file"]):
        return {**table, "file": str((root / table["file"]).resolve())}
    return table


def write_check_toml(path: Path, tables: list[dict], kernel_files: list[str]) -> list[int]:
    """Write `tables` to a fresh toml at `path` with capture's writer; return each table's `launch`
    line. Comment lines come first, past the last line of every kernel file, so a launch result's
    line tells a table's launch from a `# tilelens:` directive of the kernel's own file."""
    longest = 0
    for file in kernel_files:
        try:
            with open(file, "rb") as f:
                longest = max(longest, sum(1 for _ in f))
        except OSError:
            pass
    path.write_text(
        "# launches recorded by tilelens-lsp, checked as `tilelens-lsp check --config` does\n" + "#\n" * (longest + 1),
        encoding="utf-8",
    )
    runner.write(path, tables, merge=True)
    lines = path.read_text(encoding="utf-8").splitlines()
    return [i + 1 for i, line in enumerate(lines) if line.startswith("launch = ")]


# ---------------------------------------------------------------- check_launch


@dataclass(frozen=True)
class LaunchCheck:
    """The verdicts of one launch: one `LaunchResult` per config it compiles to (the records of
    `check --format json`), and the file-level diagnostics that concern it (an import failure, a launch
    that does not bind, a worker crash).

    `findings` is everything that keeps the launch from being clean, refusals included: a launch that
    was not analysed is never clean, so `assert not result.findings` holds only for a clean verdict."""

    kernel: str
    path: str  # the kernel's file, as `check` prints it
    launch: str  # the launch as capture writes it (`kernel[grid](args)`)
    results: tuple[LaunchResult, ...]
    file_diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def status(self) -> str:
        """`analyzed` when every config was; else the worst status of a config, or `compile-error` /
        `crashed` for a file that could not be imported or analysed at all."""
        statuses = [r.status for r in self.results]
        for status in ("directive-error", "compile-error", "crashed", "refused"):
            if status in statuses:
                return status
        if any(d.code == "TL050" for d in self.file_diagnostics):
            return "crashed"
        if any(d.code == "TL030" for d in self.file_diagnostics) and not statuses:
            return "refused"
        if any(d.code in ("TL010", "TL020") for d in self.file_diagnostics) or not statuses:
            return "compile-error"
        return "analyzed"

    @property
    def accesses(self) -> tuple[Access, ...]:
        return tuple(a for r in self.results for a in r.accesses)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        seen: set[tuple] = set()
        out = []
        for d in list(self.file_diagnostics) + [d for r in self.results for d in r.diagnostics]:
            key = (d.code, d.line, d.column, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
        return tuple(out)

    @property
    def findings(self) -> tuple[Diagnostic, ...]:
        """Errors, warnings and refusals (TL030): all but hints and notes on suppression comments."""
        return tuple(d for d in self.diagnostics if d.severity != "hint" and d.code != "TL060")

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def clean(self) -> bool:
        return self.status == "analyzed" and not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "path": self.path,
            "launch": self.launch,
            "status": self.status,
            "accesses": [a.to_json() for a in self.accesses],
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "findings": [d.to_json() for d in self.findings],
            "launches": [r.to_json() for r in self.results],
        }

    def __str__(self) -> str:
        lines = [f"{self.launch}: {self.status}"]
        lines += [f"{_where(self.path, d)}: {d.severity}: {d.message} [{d.code}]" for d in self.findings]
        return "\n".join(lines)


def _where(path: str, d: Diagnostic) -> str:
    frame = d.stack[0] if d.stack and (d.stack[0].line, d.stack[0].column) == (d.line, d.column) else None
    return f"{frame.path if frame and frame.path else path}:{d.line}:{d.column}"


# torch's dtype names for the directive dtypes the hook knows (it reads `dtype.name`)
_HOOK_DTYPES = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i1": "bool",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
}


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


class _Storage:
    def __init__(self, elements: int) -> None:
        self.elements = elements

    def nbytes(self) -> int:
        return self.elements


class SpecTensor:
    """A TensorSpec dressed as the tensor the hook reads (dtype, shape, strides, storage offset and
    size, value range), so a declared view is recorded exactly as a real tensor with that view is."""

    def __init__(self, spec: TensorSpec) -> None:
        if spec.dtype not in _HOOK_DTYPES:
            raise ValueError(f"check_launch cannot pass a {spec.dtype} tensor spec (it can: {', '.join(_HOOK_DTYPES)})")
        self.spec = spec
        self.dtype = _Named(_HOOK_DTYPES[spec.dtype])
        self.shape = tuple(spec.shape)

    def data_ptr(self) -> int:
        return 0

    def stride(self) -> tuple[int, ...]:
        return tuple(self.spec.strides)

    def storage_offset(self) -> int:
        return self.spec.offset

    def element_size(self) -> int:
        return 1

    def untyped_storage(self) -> _Storage:
        return _Storage(self.spec.storage or self.spec.offset + self.spec.numel)

    def tilelens_values(self) -> list:
        """The declared value set as the hook records it: [LO, HI), or its parts [[LO, HI], ...]
        (read by the hook instead of min/max/unique, which a spec has no elements for)."""
        if self.spec.values is None:
            raise ValueError("no declared value range")
        parts = [[lo, hi] for lo, hi in value_intervals(self.spec.values)]
        return parts[0] if len(parts) == 1 else parts


def spec_from_text(text: str) -> TensorSpec:
    """A directive tensor spec (`"fp32[4096]"`, `"i32[64].values(0, 10)"`, `"tensor(fp16, (4, 8),
    strides=(1, 4))"`) read by the directives' own evaluator; ValueError if it is none."""
    try:
        value = Evaluator({}, source=text).eval(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, EvalError) as exc:
        raise ValueError(f"not a tensor spec: {text!r} ({exc})") from None
    if not isinstance(value, TensorSpec):
        raise ValueError(f"not a tensor spec: {text!r} (pass numbers as numbers)")
    return value


def as_recordable(value: Any) -> Any:
    """A spec (TensorSpec or spec string) as a stand-in the hook records as that view; anything else as is."""
    if isinstance(value, str):
        value = spec_from_text(value)
    if isinstance(value, TensorSpec):
        return SpecTensor(value)
    return value


class Checker:
    """Checks launches in one worker process, started on the first check and kept for the next ones
    (a test module that checks many launches pays Triton's start-up once)."""

    def __init__(self, python: str | None = None, target: str | None = None, timeout: float | None = None) -> None:
        settings = from_environment(Settings())
        if python:
            settings = merge(settings, {"interpreter": python})
        if target:
            settings = merge(settings, {"target": check_target(target)})
        if timeout is not None:
            settings = merge(settings, {"timeout": timeout})
        self.settings = replace(settings, target_pinned=True)
        self._worker: Worker | None = None
        self._recorder: Recorder | None = None
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._calls = itertools.count()

    def check_launch(self, kernel, grid, *args, **kwargs) -> LaunchCheck:
        if os.environ.get(IN_WORKER_VARIABLE):
            return _nested(kernel)
        with self._lock:
            return self._check(kernel, grid, args, kwargs)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.finish()
            self._worker = None
        if self._recorder is not None:
            self._recorder.close()
            self._recorder = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _check(self, kernel, grid, args: tuple, kwargs: dict) -> LaunchCheck:
        if self._recorder is None:
            self._recorder = Recorder()
        record = self._recorder.record(
            kernel, grid, tuple(as_recordable(a) for a in args), {k: as_recordable(v) for k, v in kwargs.items()}
        )
        if record is None:
            raise TypeError(
                f"{getattr(kernel, '__name__', kernel)!r} is not a Triton kernel "
                "(a @triton.jit function, or an autotuner or heuristics around one)"
            )
        root = find_root(Path(record["file"]).parent)
        table, why = table_of(record, root)
        if table is None:
            raise ValueError(f"this launch cannot be written as a launch table: {why}")
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="tilelens-check-"))
        toml = self._folder / f"launch-{next(self._calls)}.toml"
        try:
            (line,) = write_check_toml(toml, [anywhere(table, root)], [record["file"]])
            files = files_in_config(toml, self.settings.interpreter)
            path = Path(files[0]) if files else Path(record["file"])
            if self._worker is None:
                self._worker = Worker(self.settings)
            result = self._worker.analyze(path, root, str(toml))
        finally:
            toml.unlink(missing_ok=True)
        try:
            result = suppress.apply(result, path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            pass
        return _pick(result, record["kernel"], line, toml.name, table["launch"])


def _nested(kernel) -> LaunchCheck:
    """What a call made while a tilelens worker imports the caller's module gets: a refusal, at once.
    A script that checks its own kernel at module level is run again by the worker that imports it to
    find the kernel; checking there would start another worker importing it again, without end."""
    name = str(getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "?"))
    why = Diagnostic(
        "TL030",
        "not analyzed: nested-check: check_launch was called while tilelens imports this module to analyse "
        "it (a call at module level runs again there); the call that started the analysis gets the "
        'verdicts. Call it inside a function or under `if __name__ == "__main__":` to run it once',
        1,
        1,
        kind="nested-check",
    )
    return LaunchCheck(name, "", f"{name}[...]", (), (why,))


def _pick(result: FileResult, kernel: str, line: int, toml_name: str, launch: str) -> LaunchCheck:
    """The launch results of the table at `line` of the check toml, and the file-level diagnostics
    that are about it: the toml's own (TL020 at its table), and an import failure or crash of the file."""
    mine = tuple(r for r in result.launches if r.kernel == kernel and r.line == line)
    about = tuple(
        d for d in result.diagnostics if (d.stack and d.stack[0].path.endswith(toml_name)) or d.code in ("TL010", "TL050")
    )
    return LaunchCheck(kernel, result.path, launch, mine, about)


_default: Checker | None = None


def check_launch(kernel, grid, *args, **kwargs) -> LaunchCheck:
    """The verdicts of `kernel[grid](*args, **kwargs)`, found without running it.

    Arguments are what the launch would get: torch tensors (their exact views and, for integer
    tensors, the range of values they hold), TensorSpec objects or directive spec strings such as
    `"fp32[4096]"` or `"i32[64].values(0, 100)"` (no torch needed), numbers, and constexprs by
    keyword. `grid` is a tuple, or the `lambda meta: ...` an autotuned kernel is launched with. The
    kernel must be a module-level name of an importable file: the worker imports it there, in a
    process of its own, with the interpreter and target of the environment's settings."""
    global _default
    if _default is None:
        _default = Checker()
        atexit.register(_default.close)
    return _default.check_launch(kernel, grid, *args, **kwargs)
