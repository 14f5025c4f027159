"""One file's analysis, the pipeline's entry (`analyze_path`), and its plan (`plan_path`): the file's
launches read from its text and toml, its module imported, each chosen launch analysed, every path
in the result made portable (and the absolute file behind each one a client must open).

It knows nothing of LSP or of the worker's protocol; the worker's memory comes in as a `WarmState`.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from tilelens_lsp.claims import Claims
from tilelens_lsp.launches.kernels import parse_file
from tilelens_lsp.model import Diagnostic, FileResult, Frame, LaunchResult, LaunchSpec
from tilelens_lsp.pipeline.directives import Directives, config_counts, declared_launches, unlaunched
from tilelens_lsp.pipeline.imports import ImportFailure, file_scope, import_roots, load_module
from tilelens_lsp.pipeline.launch import analyze_configs, directive_error, with_origin
from tilelens_lsp.pipeline.warm import WarmState
from tilelens_lsp.pipeline.weight import launch_weights
from tilelens_lsp.settings import Settings
from tilelens_lsp.ttir.locs import PathMapper, default_mapper


def analyze_path(
    path: Path | str,
    workspace_root: Path | str | None = None,
    settings: Settings | None = None,
    config_file: Path | None = None,
    extra_launches: list[LaunchSpec] | None = None,
    select: list[int] | None = None,
    file_level: bool = True,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    state: WarmState | None = None,
    claims: Claims | None = None,
    on_done: Callable[[FileResult], None] | None = None,
) -> FileResult:
    """Analyse every declared launch of one file (or, with `select`, the launches of those indices, in
    that order; `file_level=False` leaves out the file's own diagnostics, which another part reports).

    `on_event` hears ("ready", {"launches": [[index, kernel, line], ...], "diagnostics": [...]}) once
    the module is imported, ("config", {"index": i, "config": j, "result": {...}}) as each config j of
    launch i is answered (where it has more than one), then ("launch", {"index": i, "results": [...],
    "configs": [...]}) once the launch is done, with the results that no "config" event carried (and
    their config indices): the worker streams them so that its parent times each config, not the
    launch or the file, and keeps the configs answered before one that hangs. `state` is the worker's
    memory (`WarmState`); without one, this call starts from nothing and keeps nothing. With `claims`
    (workers sharing this file's launches, see claims.py), each launch answers only the configs this
    call claims. `on_done` hears the file's whole result (the one returned) once its module is
    imported and its launches answered, while the module's scope is still in place: a worker replies
    from it, and undoing what the import did to the process (a fifth of a millisecond and more)
    follows the reply instead of delaying it."""
    state = state if state is not None else WarmState()
    path = Path(path).resolve()
    root = Path(workspace_root).resolve() if workspace_root else None
    settings = settings or Settings()
    mapper = default_mapper(root)
    portable = mapper.portable(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return FileResult(portable, (), (Diagnostic("TL010", f"cannot read this file: {exc}", 1, 1),))
    settings, launches, file_diags, toml_file = _file_launches(
        path, text, root, settings, config_file, mapper, state.directives, extra_launches
    )
    if not file_level:
        file_diags = []
    chosen = list(range(len(launches))) if select is None else [i for i in select if 0 <= i < len(launches)]
    if not chosen:
        return _located(FileResult(portable, (), tuple(file_diags)), root, mapper)
    roots = import_roots(path, root)
    with file_scope(roots):
        try:
            module = load_module(path, roots, state.imports)
        except ImportFailure as failure:
            file_diags.append(Diagnostic("TL010", failure.message, failure.line, 1))
            sources = state.imports.sources(path, failure)
            return _located(FileResult(portable, (), tuple(file_diags), sources=sources), root, mapper)
        sources = state.imports.sources(path)
        if on_event is not None:
            on_event(
                "ready",
                {
                    "path": portable,
                    "launches": [[i, launches[i].kernel, launches[i].line] for i in chosen],
                    "diagnostics": [d.to_json() for d in file_diags],
                },
            )
        source_hash = hashlib.sha256(text.encode()).hexdigest()
        results: list[LaunchResult] = []
        for i in chosen:
            launch = launches[i]
            kernel_obj = getattr(module, launch.kernel, None)
            claim = None if claims is None else functools.partial(claims.claim, i)
            origin = launch_origin(launch, portable, mapper, toml_file)
            answered: _ConfigEvents | None = None
            if kernel_obj is None:
                message = f"the module defines no kernel named '{launch.kernel}'"
                pairs = [(0, directive_error(launch, message))] if claim is None or claim(0) else []
            else:
                count = None if claims is None else functools.partial(claims.announce, i)
                answered = None if on_event is None else _ConfigEvents(on_event, i, launch, origin)
                pairs = analyze_configs(launch, kernel_obj, settings, mapper, source_hash, state, claim, count, answered)
            if claims is not None:
                claims.finish(i)
            found = [with_origin(r, launch, origin) for _, r in pairs]
            results.extend(found)
            if on_event is not None:
                # the configs streamed already are not sent twice: the launch's results are theirs, then these
                sent = answered.sent if answered is not None else 0
                rest = {"results": [r.to_json() for r in found[sent:]], "configs": [j for j, _ in pairs[sent:]]}
                on_event("launch", {"index": i, **rest})
        done = _located(FileResult(portable, tuple(results), tuple(file_diags), sources=sources), root, mapper)
        if on_done is not None:
            on_done(done)
    state.cache.flush()  # the new verdicts to disk, once the answer went out
    return done


class _ConfigEvents:
    """Hears each config of launch `index` as it is answered: a "config" event with its result."""

    def __init__(
        self, on_event: Callable[[str, dict[str, Any]], None], index: int, launch: LaunchSpec, origin: Frame
    ) -> None:
        self.on_event, self.index, self.launch, self.origin = on_event, index, launch, origin
        self.sent = 0  # how many of the launch's results went ahead (a prefix of them, in order)

    def __call__(self, config: int, result: LaunchResult) -> None:
        located = with_origin(result, self.launch, self.origin).to_json()
        self.on_event("config", {"index": self.index, "config": config, "result": located})
        self.sent += 1


def launch_origin(launch: LaunchSpec, portable: str, mapper: PathMapper, toml_file: Path | None) -> Frame:
    """Where `launch` is declared: its directive's line in the file, or its table's line in the toml
    (`launch.origin` names the kind of toml, `toml_file` is the file)."""
    if launch.origin == "comment" or toml_file is None:
        return Frame(portable, launch.line, 1)
    return Frame(toml_path(mapper, toml_file), launch.line, 1)


def _file_launches(
    path: Path,
    text: str,
    root: Path | None,
    settings: Settings,
    config_file: Path | None,
    mapper: PathMapper,
    directives: Directives,
    extra: list[LaunchSpec] | None = None,
) -> tuple[Settings, list[LaunchSpec], list[Diagnostic], Path | None]:
    """(the settings with the toml's target, the file's launches in order, its file-level diagnostics,
    the toml file its toml launches come from)."""
    file_diags: list[Diagnostic] = []
    kernels, launches, errors, toml = declared_launches(path, text, root, config_file, directives)
    if toml.target and not settings.target_pinned and settings.target == Settings().target:
        settings = replace(settings, target=toml.target)
    launches = list(launches) + list(toml.launches) + list(extra or [])
    for err in errors:
        file_diags.append(Diagnostic("TL020", err.message, err.line, err.column, end_line=err.end_line or None))
    for bad in toml.errors:
        # the table lives in a toml file: its line is the toml's (the stack's one frame), the message
        # names it for a client that shows it in the kernel file
        where = f"{toml_path(mapper, bad.path)}:{bad.line}:{bad.column}"
        file_diags.append(
            Diagnostic(
                "TL020",
                f"{where}: {bad.message}",
                bad.line,
                bad.column,
                stack=(Frame(toml_path(mapper, bad.path), bad.line, bad.column),),
            )
        )
    for k in unlaunched(kernels, launches, list(errors) + list(toml.errors)):
        file_diags.append(
            Diagnostic(
                "TL100",
                f'{k.name} has no declared launch, so it is not checked: the quick fix "Declare an '
                f'example launch" (or `tilelens-lsp suggest {mapper.portable(str(path))}`) writes one that compiles, and '
                "`tilelens-lsp capture -- COMMAND` records the launches a real run makes",
                k.line,
                k.column,
            )
        )
    return settings, launches, file_diags, toml.config_path


def plan_path(
    path: Path | str,
    workspace_root: Path | str | None = None,
    settings: Settings | None = None,
    config_file: Path | None = None,
    state: WarmState | None = None,
) -> dict[str, Any]:
    """What `analyze_path` would analyse, without importing anything: the file's portable path and, per
    launch, its index, kernel, line, origin and a cost estimate (its autotune configs times the code
    its kernel unrolls into, read from the source: weight.py). A parent splits a file's launches
    between workers, and shards, by these."""
    path = Path(path).resolve()
    root = Path(workspace_root).resolve() if workspace_root else None
    mapper = default_mapper(root)
    portable = mapper.portable(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {"path": portable, "launches": []}
    directives = state.directives if state is not None else Directives()
    _, launches, _, _ = _file_launches(path, text, root, settings or Settings(), config_file, mapper, directives)
    weights = launch_weights(parse_file(text), launches, config_counts(text))
    return {
        "path": portable,
        "launches": [
            {
                "index": i,
                "kernel": launch.kernel,
                "line": launch.line,
                "origin": launch.origin if launch.origin == "comment" else mapper.portable(launch.origin),
                "weight": weight,
            }
            for i, (launch, weight) in enumerate(zip(launches, weights))
        ],
    }


def toml_path(mapper: PathMapper, path: Path) -> str:
    """A toml config's portable path, or its absolute path where the portable one would be a bare
    name no root resolves (a `--config /tmp/x.toml` outside the workspace): a path a user can open."""
    portable = mapper.portable(str(path))
    found = mapper.absolute(portable)
    return portable if found and os.path.realpath(found) == os.path.realpath(path) else str(Path(path).resolve())


def _located(result: FileResult, root: Path | None, mapper: PathMapper) -> FileResult:
    return replace(result, absolute_paths=absolute_paths(result, root, mapper))


def absolute_paths(result: FileResult, root: Path | None, mapper: PathMapper) -> dict[str, str]:
    """The absolute file behind each portable path of `result` that is not the workspace's (an
    installed module's importable path, Triton's `triton/...`), found where the mapper found it."""
    named = {result.path} | {f.path for d in result.all_diagnostics() for f in d.stack}
    named |= {launch.origin.path for launch in result.launches if launch.origin is not None}
    out: dict[str, str] = {}
    for portable in sorted(p for p in named if p):
        if root is not None and (root / portable).is_file():
            continue
        found = mapper.absolute(portable)
        if found:
            out[portable] = found
    return out
