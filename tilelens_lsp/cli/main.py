"""Command line: `tilelens-lsp` (the server, stdio), `--tcp H:P`, `check ...`, `capture -- CMD`, `suggest FILE`.

`check` exits 0 when clean, 1 on any error-severity verdict or any launch whose analysis crashed or
timed out (TL050), 2 on usage, configuration or environment errors (an untested Triton release
among them).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tilelens_lsp import __version__, releases, suppress
from tilelens_lsp.cli import report, rule, shard, suggest
from tilelens_lsp.cli.display import Display, installed, rebase
from tilelens_lsp.cli.files import collect_files, declared_only, too_large, unlaunched_files
from tilelens_lsp.cli.options import settings_from_args
from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import Settings, from_environment
from tilelens_lsp.worker.pool import Share, analyze_files
from tilelens_lsp.worker.process import Worker, WorkerUnavailable


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilelens-lsp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tilelens-lsp {__version__}")
    parser.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="serve LSP over TCP instead of stdio (one client, which must send the token: see --token-file)",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="with --tcp: write the client's secret here (mode 0600); clients send it as initializationOptions.tcpToken",
    )
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdio (the default)")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check", help="check files and folders, print verdicts")
    check.add_argument("paths", nargs="*", help="files or folders (every .py with a declared launch)")
    check.add_argument("--config", type=Path, help="a tilelens.toml or pyproject.toml with [[launch]] tables")
    check.add_argument("--target", help="compile target, e.g. cuda:89 (default) or cuda:90")
    check.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="github: workflow commands that annotate the pull request's diff",
    )
    check.add_argument(
        "--declared-only",
        action="store_true",
        help="skip given files that declare no launch (pre-commit passes every changed .py); "
        "no worker starts when none is left",
    )
    check.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="report only these codes or prefixes, comma-separated (TL001,TL003 or TL0; ALL)",
    )
    check.add_argument(
        "--ignore",
        action="append",
        metavar="CODES",
        help="never report these codes or prefixes (wins over an equally specific --select)",
    )
    check.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        help="analyse launches in N parallel workers (a file's launches are split between them)",
    )
    check.add_argument(
        "--timeout",
        type=_positive_seconds,
        help="seconds per config of a launch (and per import) before the worker is replaced",
    )
    check.add_argument("--python", help="interpreter for the worker (default: this one)")
    check.add_argument("--root", type=Path, help="workspace root for portable paths (default: nearest marker)")
    shard.add_shard_flag(check)
    check.add_argument(
        "--fail-on",
        action="append",
        choices=("refused",),
        default=[],
        help="refused: exit 1 when any launch was refused (not analysed), for CI",
    )
    check.add_argument(
        "--show-hints",
        action="store_true",
        help="text: one TL100 line per kernel without a declared launch (default: one line for all)",
    )
    capture = sub.add_parser(
        "capture",
        help="run a command and record the Triton launches it makes as tilelens.toml launch tables",
        usage="tilelens-lsp capture [--out FILE] [--merge] [--per-kernel N] -- COMMAND [ARGS...]",
    )
    capture.add_argument(
        "--out", type=Path, default=Path("tilelens.toml"), help="the toml to write (default: tilelens.toml here)"
    )
    capture.add_argument("--merge", action="store_true", help="add to an existing file, skipping launches it holds")
    capture.add_argument("--per-kernel", type=int, default=8, help="at most N launches per kernel (default 8)")
    capture.add_argument("cmd", nargs=argparse.REMAINDER, metavar="COMMAND", help="the program to run, after --")
    suggest.add_parser(sub)
    rule.add_parser(sub)
    shard.add_merge_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args, parser)
    if args.command == "suggest":
        return suggest.run_suggest(args)
    if args.command == "rule":
        return rule.run_rule(args)
    if args.command == "merge":
        return run_merge(args)
    if args.command == "capture":
        command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        if not command:
            parser.error("capture needs a command to run: tilelens-lsp capture -- python my_script.py")
        if args.per_kernel < 1:
            parser.error("--per-kernel must be at least 1")
        from tilelens_lsp.capture import runner as capture  # lazy: only this subcommand needs tomli_w and the hook

        return capture.run(command, args.out, args.merge, args.per_kernel)
    if args.token_file is not None and not args.tcp:
        parser.error("--token-file goes with --tcp")
    prestarted = _prestart_worker()
    from tilelens_lsp.lsp.server import serve  # lazy: pygls and lsprotocol take most of a second to import

    return serve(args.tcp, prestarted, args.token_file)


def _prestart_worker() -> Worker | None:
    """Spawn the analysis worker with default settings while the server itself is still importing
    (from the main thread, which lives as long as the server); the server adopts it when the client's
    settings ask for the same interpreter."""
    try:
        worker = Worker(from_environment(Settings()))
        worker.begin()
    except (WorkerUnavailable, ValueError):
        return None  # the server starts its own worker and reports why
    return worker


def run_check(args, parser: argparse.ArgumentParser) -> int:
    try:
        args.select, args.ignore = suppress.parse_codes(args.select), suppress.parse_codes(args.ignore)
    except ValueError as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    try:
        settings = settings_from_args(args)
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
            from tilelens_lsp.launches.toml import files_in_config, read_target  # lazy: see cli/files.py

            config_files = [Path(f).resolve() for f in files_in_config(config, settings.interpreter)]
            read_target(config)
        except Exception as exc:  # noqa: BLE001 - a broken toml is a configuration error
            print(f"tilelens-lsp: {config}: {exc}", file=sys.stderr)
            return 2
    if not args.paths and config is None:
        args.paths = ["."]  # with --config, its launches and the paths given: nothing else
    files, errors = collect_files(args.paths, config_files)
    if errors:
        for e in errors:
            print(f"tilelens-lsp: {e}", file=sys.stderr)
        return 2
    if args.declared_only:
        files = declared_only(files, config)
        if not files:
            return 0  # nothing declares a launch: nothing to import, nothing to report
    workspace = [f for f in files if not installed(f)]
    root = (
        args.root.resolve()
        if args.root
        else find_root(Path(os.path.commonpath([str(f.parent) for f in workspace])) if workspace else Path.cwd())
    )
    display = Display(
        root,
        Path.cwd().resolve(),
        tuple(x for flag in ("python", "target") if getattr(args, flag, None) for x in (f"--{flag}", getattr(args, flag))),
    )
    broken = _broken_config(files, root, config)
    if broken:
        print(f"tilelens-lsp: {broken}", file=sys.stderr)
        return 2
    unresolved = _unresolved_launches(args.paths, root, config, settings.interpreter, display)
    unlaunched = [] if args.declared_only else unlaunched_files(args.paths, files)
    target: str | None
    if args.target or os.environ.get("TILELENS_IR_TARGET"):
        target = settings.target
    else:
        target, why = _toml_target(files, root, config)
        if why:
            print(f"tilelens-lsp: {why}", file=sys.stderr)
            return 2
    # what the JSON and SARIF say is what every file compiles for: the toml may no longer change it
    settings = replace(settings, target=target or Settings().target, target_pinned=True)
    if not files:
        return _finish(args, unresolved, [], Settings().target if not target else target, "", display, unlaunched)
    jobs = max(1, args.jobs)
    server = _fork_server(settings) if jobs > 1 else None
    workers = [Worker(settings, fork_server=server) for _ in range(jobs)]  # each starts on its first request
    try:
        hello = workers[0].start()
    except WorkerUnavailable as exc:
        _stop(workers, server)
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    diag = releases.gate(hello.triton)
    if diag is not None:
        _stop(workers, server)
        args.exit_now = 2
        return _finish(args, [FileResult("", (), (diag,))], [], settings.target, hello.triton, display, [])
    positions: list[tuple[int, ...]] = []
    results = _analyze_all(workers, files, root, config, settings, args.shard, positions)
    _stop(workers, server)
    results = [_portable(r, f, root) for r, f in zip(results, files)]
    raw = [rebase(r, display) for r in results]
    shown = _suppressed(raw, files, args.select, args.ignore)
    # `check --shard`: the shard a document holds and each launch's declared index
    args.marks = (args.shard, [()] * len(unresolved) + positions) if args.shard else None
    return _finish(
        args,
        unresolved + shown,
        [""] * len(unresolved) + [str(f) for f in files],
        settings.target,
        hello.triton,
        display,
        unlaunched,
        raw,
    )


def _fork_server(settings: Settings):
    """Warm workers for `--jobs N` (worker/forkserver.py), or None: then each worker starts cold."""
    if os.environ.get("TILELENS_FORK_SERVER", "1") == "0":
        return None
    from tilelens_lsp.worker.forkserver import ForkServer
    from tilelens_lsp.worker.process import spawn_process

    return ForkServer.start(settings, lambda extra, stdin: spawn_process(settings, extra, stdin))


def run_merge(args) -> int:
    """`tilelens-lsp merge`: the shards' documents as the one unsharded run prints them (exit code too)."""
    try:
        docs = shard.load(args.documents)
        if docs and all(shard.is_sarif(d) for d in docs):
            if args.format != "sarif":
                raise shard.MergeError(
                    "SARIF shards merge into SARIF only (--format sarif); merge JSON shards for other formats"
                )
            print(report.dumps(shard.merge_sarif(docs)))
            return 0
        results, triton, target = shard.merge_json(docs, args.partial)
    except shard.MergeError as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    absolute = [shard.absolute_path(docs, r.path) for r in results]
    try:
        _print_results(args.format, results, absolute, triton, target, shard.merge_summaries(docs), None, True)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return exit_code(results)


def _unresolved_launches(
    paths: list[str], root: Path, config: Path | None, python: str | None, display: Display
) -> list[FileResult]:
    """A TL010 at its toml line for each launch table of the tomls in play that names no file the
    worker can import (an unknown `module =`, a `file =` that does not exist): never dropped in silence.

    The tomls in play: `--config`, else the workspace toml of each folder given."""
    from tilelens_lsp.launches.toml import config_errors, find_config  # lazy: see cli/files.py

    tomls: dict[Path, str] = {}
    if config is not None:
        tomls[config] = "config"
    else:
        for raw in paths:
            if Path(raw).is_dir():
                found = find_config(Path(raw).resolve() / "__tilelens__.py", find_root(Path(raw)))
                if found is not None:
                    tomls.setdefault(found[0].resolve(), found[1])
    out = []
    for toml, origin in tomls.items():
        diags = tuple(
            Diagnostic("TL010", f"this launch is not checked: {e.message}{_file_hint(e, toml, root)}", e.line, e.column)
            for e in config_errors(toml, origin, python)
            if "`module`" in e.message or "`file`" in e.message
        )
        if diags:
            out.append(FileResult(display.relative(toml), (), diags))
    return out


def exit_code(results: list[FileResult]) -> int:
    """1 for any error-severity verdict or any analysis that crashed or timed out (TL050), else 0:
    a launch that was never analysed is not clean."""
    if any(d.severity == "error" or d.code == "TL050" for r in results for d in r.all_diagnostics()):
        return 1
    return 0


def _suppressed(
    results: list[FileResult], files: list[Path], select: tuple[str, ...] | None, ignore: tuple[str, ...] | None
) -> list[FileResult]:
    """Each file's `# tilelens: ignore` comments applied, then `--select`/`--ignore`."""
    out = []
    for result, path in zip(results, files):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        out.append(suppress.select_codes(suppress.apply(result, text), select, ignore))
    return out


def _toml_target(files: list[Path], root: Path, config: Path | None) -> tuple[str | None, str | None]:
    """The one target the tomls that apply to `files` ask for (the default where none sets one), or
    why there is no one target."""
    from tilelens_lsp.launches.toml import find_config, read_target  # lazy: see cli/files.py

    seen: dict[str, str] = {}
    targets: dict[Path, str | None] = {}  # each config read once, not once per file it declares
    for f in files:
        found = find_config(f, root, config)
        if found and found[0] not in targets:
            targets[found[0]] = read_target(found[0])
        target = targets[found[0]] if found else None
        seen.setdefault(target or Settings().target, str(found[0]) if found and target else "the default")
    if len(seen) > 1:
        where = ", ".join(f"{t} from {origin}" for t, origin in seen.items())
        return None, f"these files compile for different targets ({where}): pass --target, or check them separately"
    return next(iter(seen), None), None


def _broken_config(files: list[Path], root: Path, config: Path | None) -> str | None:
    """Why the toml that declares launches for `files` is unusable (invalid toml, bad target), or None.

    A broken config is a configuration error (exit 2), like a bad `--config` file: its launches
    would otherwise be silently missing from the verdicts."""
    from tilelens_lsp.launches.toml import ConfigError, find_config, read_target  # lazy: see cli/files.py

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


def _analyze_all(
    workers: list[Worker],
    files: list[Path],
    root: Path,
    config: Path | None,
    settings: Settings,
    share: Share | None = None,
    positions: list[tuple[int, ...]] | None = None,
) -> list[FileResult]:
    """Every file's result: its launches spread over the workers (worker/pool.py), `share` of them only."""
    cfg = str(config) if config else None
    return analyze_files(workers, files, root, cfg, settings, share, skip=lambda f: too_large(f, root), positions=positions)


def _portable(result: FileResult, path: Path, root: Path) -> FileResult:
    if result.path and not os.path.isabs(result.path):
        return result
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = str(path)  # outside the workspace: the file itself, never a bare name that may collide
    return replace(result, path=rel)


def _stop(workers: list[Worker], server=None) -> None:
    for w in workers:
        w.finish()
    if server is not None:
        server.stop()


def _file_hint(error, toml: Path, root: Path) -> str:
    """For a `module =` that is a file of the workspace: the `file =` line that names it."""
    name = error.message.split("no module named '", 1)[-1].split("'", 1)[0] if "no module named" in error.message else ""
    for base in (root, Path.cwd()):
        candidate = base / (name.replace(".", "/") + ".py") if name else None
        if candidate is not None and candidate.is_file():
            rel = Path(os.path.relpath(candidate.resolve(), toml.parent)).as_posix()
            return f'; it is a file of this workspace: write `file = "{rel}"` instead of `module =`'
    return ""


def summarize(results: list[FileResult], raw: list[FileResult]) -> dict[str, Any]:
    """Launches counted by what became of them: analysed (clean or with findings), refused (by kind:
    not analysed), failed (compile, directive or worker errors); files whose import failed."""
    out: dict[str, Any] = {
        "files": len(raw),
        "launches": 0,
        "analyzed": 0,
        "clean": 0,
        "with_findings": 0,
        "refused": 0,
        "refused_by_kind": {},
        "failed": 0,
        "files_not_imported": 0,
    }
    kinds: dict[str, int] = out["refused_by_kind"]
    for before, after in zip(raw, results):
        out["launches"] += len(after.launches)
        if not before.launches and any(d.code in ("TL010", "TL050") for d in before.diagnostics):
            out["files_not_imported"] += 1
        for launch, shown in zip(before.launches, after.launches):
            if launch.status == "analyzed":
                out["analyzed"] += 1
                found = any(d.severity in ("error", "warning") for d in shown.diagnostics)
                out["with_findings" if found else "clean"] += 1
            elif launch.status == "refused" and not any(d.code == "TL050" for d in launch.diagnostics):
                out["refused"] += 1
                for kind in sorted({d.kind or "unknown" for d in launch.diagnostics if d.code == "TL030"} or {"unknown"}):
                    kinds[kind] = kinds.get(kind, 0) + 1
            else:
                out["failed"] += 1
    return out


def summary_line(counts: dict[str, Any], errors: int) -> str:
    parts = [f"{counts['analyzed']} analysed ({counts['clean']} clean, {counts['with_findings']} with findings)"]
    kinds = ", ".join(f"{k}: {n}" for k, n in sorted(counts["refused_by_kind"].items()))
    parts.append(f"{counts['refused']} refused" + (f" ({kinds})" if kinds else ""))
    parts.append(f"{counts['failed']} failed")
    line = f"tilelens-lsp: {counts['files']} file(s), {counts['launches']} launch(es): " + ", ".join(parts)
    if counts["files_not_imported"]:
        line += f"; {counts['files_not_imported']} file(s) could not be imported or read"
    return line + f"; {errors} error(s)"


def _unlaunched_kernels(
    results: list[FileResult], unlaunched: list[tuple[Path, list]], display: Display
) -> list[tuple[str, str, str, int, int]]:
    """(shown path, the `suggest` command for its file, kernel, line, column) of every kernel without a
    declared launch."""
    out = []
    for r in results:
        for d in r.diagnostics:
            if d.code == "TL100":
                out.append(
                    (
                        r.path,
                        display.suggest_command(display.pasteable(r.path, r)),
                        d.message.split(" ", 1)[0],
                        d.line,
                        d.column,
                    )
                )
    for path, kernels in unlaunched:
        shown = display.relative(path)
        command = display.suggest_command(display.pasteable(shown, FileResult(shown)))
        out.extend((shown, command, name, line, col) for name, line, col in kernels)
    return out


def no_launch_message(kernels: list[tuple]) -> str:
    names, suggest = _kernel_list(kernels, 8), kernels[0][1]
    return (
        f"tilelens-lsp: nothing was checked: no launch is declared for any of the {len(kernels)} kernel(s) "
        f"found ({names}). Next: `{suggest}` prints a launch that compiles for "
        "each kernel of a file (`--write` inserts it), `tilelens-lsp capture -- COMMAND` records the "
        "launches a real run makes; pass --declared-only to accept a tree without launches"
    )


def _kernel_list(kernels: list[tuple], most: int) -> str:
    by_file: dict[str, list[str]] = {}
    for shown, _, name, _, _ in kernels:
        by_file.setdefault(shown, []).append(name)
    parts = [f"{path}: {', '.join(names)}" for path, names in by_file.items()]
    if len(parts) > most:
        parts = parts[:most] + [f"{len(parts) - most} more file(s)"]
    return "; ".join(parts)


def hint_line(kernels: list[tuple]) -> str:
    suggest = kernels[0][1]
    return (
        f"tilelens-lsp: {len(kernels)} kernel(s) without a declared launch, not checked: "
        f"{_kernel_list(kernels, 6)} (--show-hints lists each; `{suggest}` "
        "declares one)"
    )


def _finish(
    args,
    results: list[FileResult],
    absolute: list[str],
    target: str,
    triton: str,
    display: Display,
    unlaunched: list,
    raw: list[FileResult] | None = None,
) -> int:
    """Print the results and the summary; return the exit status, also when the reader of stdout went
    away (`| head -1`)."""
    raw = raw if raw is not None else []
    analysed = results[len(results) - len(raw) :] if raw else []
    counts = summarize(analysed, raw)
    kernels = _unlaunched_kernels(analysed, unlaunched, display)
    code = getattr(args, "exit_now", None)
    if code is None:
        code = exit_code(results)
        if "refused" in args.fail_on and (counts["refused"] or counts["failed"] or counts["files_not_imported"]):
            code = max(code, 1)
        if len(results) > len(analysed):  # a toml launch that names nothing the worker can import
            code = 2
        elif not counts["launches"] and kernels and not args.declared_only:
            code = 2
    if args.show_hints and unlaunched:
        results = results + [
            FileResult(
                display.relative(p),
                (),
                tuple(
                    Diagnostic(
                        "TL100",
                        f"{name} has no declared launch, so it is not checked: `"
                        f"{display.suggest_command(display.pasteable(display.relative(p), FileResult('')))}` "
                        "writes one that compiles",
                        line,
                        col,
                    )
                    for name, line, col in ks
                ),
            )
            for p, ks in unlaunched
        ]
    try:
        _emit(args, results, absolute, triton, target, counts)
        if args.format == "text":
            errors = sum(1 for r in results for d in r.all_diagnostics() if d.severity == "error")
            if not counts["launches"] and kernels:
                print(no_launch_message(kernels), file=sys.stderr)
            elif kernels and not args.show_hints:
                print(hint_line(kernels), file=sys.stderr)
            print(summary_line(counts, errors), file=sys.stderr)
            if counts["refused"] and "refused" not in args.fail_on:
                print(
                    "tilelens-lsp: a refused launch was not analysed (its TL030 says why and what to declare); "
                    "--fail-on refused makes it fail the check",
                    file=sys.stderr,
                )
        sys.stdout.flush()
    except BrokenPipeError:
        # Nobody reads the rest: point stdout at /dev/null so the interpreter's last flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return code


def _emit(args, results: list[FileResult], absolute: list[str], triton: str, target: str, counts: dict[str, Any]) -> None:
    _print_results(args.format, results, absolute, triton, target, counts, getattr(args, "marks", None), args.show_hints)


def _print_results(
    fmt: str,
    results: list[FileResult],
    absolute: list[str] | None,
    triton: str,
    target: str,
    counts: dict[str, Any] | None,
    marks,
    hints: bool,
) -> None:
    """`marks`: (the shard, each file's launches' declared indices) for the output of `check --shard`."""
    if fmt == "text":
        for line in report.text_lines(results, hints=hints):
            print(line)
    elif fmt == "json":
        doc = report.json_document(results, triton, target, absolute or None, counts)
        print(report.dumps(_marked(doc, fmt, marks)))
    elif fmt == "github":
        for line in report.github_lines(results):
            print(line)
    else:
        print(report.dumps(_marked(report.sarif_document(results, triton, target, counts), fmt, marks)))


def _marked(doc: dict, fmt: str, marks) -> dict:
    """A `check --shard` document: which shard it holds, and (JSON) each launch's declared index."""
    if marks is None:
        return doc
    share, positions = marks
    if fmt == "json":
        doc = shard.mark_positions(doc, positions)
    return shard.annotate(doc, fmt, share)


if __name__ == "__main__":
    raise SystemExit(main())
