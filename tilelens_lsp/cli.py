"""Command line: `tilelens-lsp` (the server, stdio), `tilelens-lsp --tcp H:P`, `tilelens-lsp check ...`.

`check` exits 0 when clean, 1 on any error-severity verdict, 2 on usage, configuration or
environment errors (an untested Triton release among them).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
from pathlib import Path

from tilelens_lsp import __version__, releases
from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.settings import Settings, check_target, from_environment, merge
from tilelens_lsp.workers import Worker, WorkerUnavailable

_ROOT_MARKERS = ("tilelens.toml", "pyproject.toml", ".git")


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding a root marker, else `start`."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if any((folder / m).exists() for m in _ROOT_MARKERS):
            return folder
    return start


def has_launch(path: Path) -> bool:
    try:
        return "tilelens:" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def declared_in_toml(path: Path, root: Path, tables: dict[Path, set[Path]]) -> bool:
    """Whether the toml that applies to `path` (tilelens.toml at `root`, else the nearest pyproject.toml
    with [tool.tilelens]) has a launch table naming it; `tables` caches each toml's files."""
    from tilelens_lsp.launchconfig import ConfigError, files_in_config, find_config
    found = find_config(path, root)
    if found is None:
        return False
    if found[0] not in tables:
        try:
            tables[found[0]] = set(files_in_config(found[0]))
        except ConfigError:
            tables[found[0]] = set()
    return path.resolve() in tables[found[0]]


def collect_files(paths: list[str], config_files: list[Path]) -> tuple[list[Path], list[str]]:
    files: list[Path] = []
    errors: list[str] = []
    tables: dict[Path, set[Path]] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            root = find_root(p)
            for f in sorted(p.rglob("*.py")):
                if not any(part.startswith(".") or part in ("node_modules", "__pycache__")
                           for part in f.relative_to(p).parts) and (has_launch(f) or
                                                                    declared_in_toml(f, root, tables)):
                    files.append(f.resolve())
        elif p.is_file():
            files.append(p.resolve())
        else:
            errors.append(f"no such file or folder: {raw}")
    files.extend(config_files)
    unique: list[Path] = []
    for f in files:
        if f not in unique:
            unique.append(f)
    return unique, errors


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilelens-lsp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tilelens-lsp {__version__}")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve LSP over TCP instead of stdio")
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdio (the default)")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check", help="check files and folders, print verdicts")
    check.add_argument("paths", nargs="*", help="files or folders (every .py with a declared launch)")
    check.add_argument("--config", type=Path, help="a tilelens.toml or pyproject.toml with [[launch]] tables")
    check.add_argument("--target", help="compile target, e.g. cuda:89 (default) or cuda:90")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument("--jobs", "-j", type=int, default=1, help="analyse files in N parallel workers")
    check.add_argument("--timeout", type=float, help="seconds per file before the worker is replaced")
    check.add_argument("--python", help="interpreter for the worker (default: this one)")
    check.add_argument("--root", type=Path, help="workspace root for portable paths (default: nearest marker)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args, parser)
    prestarted = _prestart_worker()
    from tilelens_lsp.server import serve   # pygls and lsprotocol take most of a second to import
    return serve(args.tcp, prestarted)


def _prestart_worker() -> Worker | None:
    """Spawn the analysis worker with default settings while the server itself is still importing
    (from the main thread, which lives as long as the server); the server adopts it when the client's
    settings ask for the same interpreter."""
    worker = Worker(from_environment(Settings()), cwd=os.getcwd())
    try:
        worker.begin()
    except WorkerUnavailable:
        return None   # the server starts its own worker and reports why
    return worker


def run_check(args, parser: argparse.ArgumentParser) -> int:
    settings = from_environment(Settings())
    try:
        if args.target:
            settings = merge(settings, {"target": check_target(args.target)})
        if args.timeout:
            settings = merge(settings, {"timeout": args.timeout})
        if args.python:
            settings = merge(settings, {"interpreter": args.python})
    except ValueError as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    config_files: list[Path] = []
    config = args.config.resolve() if args.config else None
    if config is not None:
        if not config.is_file():
            print(f"tilelens-lsp: no such config file: {args.config}", file=sys.stderr)
            return 2
        try:
            from tilelens_lsp.launchconfig import files_in_config, read_target
            config_files = [Path(f).resolve() for f in files_in_config(config, settings.interpreter)]
            toml_target = read_target(config)
        except Exception as exc:  # noqa: BLE001 - a broken toml is a configuration error
            print(f"tilelens-lsp: {config}: {exc}", file=sys.stderr)
            return 2
        if toml_target and not args.target:
            settings = merge(settings, {"target": toml_target})
    if not args.paths and not config_files:
        args.paths = ["."]
    files, errors = collect_files(args.paths, config_files)
    if errors:
        for e in errors:
            print(f"tilelens-lsp: {e}", file=sys.stderr)
        return 2
    root = (args.root.resolve() if args.root else
            config.parent if config else find_root(Path(os.path.commonpath([str(f.parent) for f in files]))
                                                    if files else Path.cwd()))
    broken = _broken_config(files, root, config)
    if broken:
        print(f"tilelens-lsp: {broken}", file=sys.stderr)
        return 2
    jobs = max(1, args.jobs)
    workers = [Worker(settings, cwd=str(root)) for _ in range(min(jobs, max(1, len(files))))]
    try:
        hello = workers[0].start()
    except WorkerUnavailable as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    if not releases.is_tested(hello.triton) and not releases.untested_allowed():
        diag = Diagnostic("TL040", releases.gate_message(hello.triton), 1, 1)
        _emit(args.format, [FileResult("", (), (diag,))], hello.triton, settings.target)
        _stop(workers)
        return 2
    results = _analyze_all(workers, files, root, config, settings)
    _stop(workers)
    results = [_portable(r, f, root) for r, f in zip(results, files)]
    _emit(args.format, results, hello.triton, settings.target)
    if any(d.severity == "error" for r in results for d in r.all_diagnostics()):
        return 1
    return 0


def _broken_config(files: list[Path], root: Path, config: Path | None) -> str | None:
    """Why the toml that declares launches for `files` is unusable (invalid toml, bad target), or None.

    A broken config is a configuration error (exit 2), like a bad `--config` file: its launches
    would otherwise be silently missing from the verdicts."""
    from tilelens_lsp.launchconfig import ConfigError, find_config, read_target
    checked: set[Path] = set()
    for f in files:
        found = find_config(f, root, config)
        if found is None or found[0] in checked:
            continue
        checked.add(found[0])
        try:
            read_target(found[0])
        except ConfigError as exc:
            return str(exc)
    return None


def _analyze_all(workers: list[Worker], files: list[Path], root: Path, config: Path | None,
                 settings: Settings) -> list[FileResult]:
    cfg = str(config) if config else None
    if len(workers) == 1:
        return [workers[0].analyze(f, root, cfg) for f in files]
    free: list[Worker] = list(workers)
    import threading
    lock = threading.Condition()

    def one(path: Path) -> FileResult:
        with lock:
            while not free:
                lock.wait()
            worker = free.pop()
        try:
            return worker.analyze(path, root, cfg)
        finally:
            with lock:
                free.append(worker)
                lock.notify()

    with concurrent.futures.ThreadPoolExecutor(len(workers)) as pool:
        return list(pool.map(one, files))


def _portable(result: FileResult, path: Path, root: Path) -> FileResult:
    if result.path and not os.path.isabs(result.path):
        return result
    from dataclasses import replace
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return replace(result, path=rel)


def _stop(workers: list[Worker]) -> None:
    for w in workers:
        w.stop()


def _emit(fmt: str, results: list[FileResult], triton: str, target: str) -> None:
    from tilelens_lsp import report
    if fmt == "text":
        lines = report.text_lines(results)
        for line in lines:
            print(line)
        n_err = sum(1 for r in results for d in r.all_diagnostics() if d.severity == "error")
        n_launch = sum(len(r.launches) for r in results)
        print(f"tilelens-lsp: {len(results)} file(s), {n_launch} launch(es), {n_err} error(s)", file=sys.stderr)
    elif fmt == "json":
        print(report.dumps(report.json_document(results, triton, target)))
    else:
        print(report.dumps(report.sarif_document(results, triton, target)))


if __name__ == "__main__":
    raise SystemExit(main())
