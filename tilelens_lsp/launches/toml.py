"""Launches declared in toml instead of comments: `[[tool.tilelens.launch]]` in pyproject.toml,
`[[launch]]` in a workspace `tilelens.toml`, or an explicit `--config` file (docs/directives.md).

A table names its kernel file by `file =` (relative to the toml's folder) or, for a kernel of an
installed package, by `module = "pkg.mod"`: found on the worker interpreter's `sys.path` (then the
toml's folder) the way `import` would find it, without running any of the package's code.

The strings are evaluated by the same whitelist evaluator as the comment form
(`launches.statements.run_statements`); errors point at the toml line that holds the bad string.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tilelens_lsp.launches.statements import run_statements
from tilelens_lsp.model import LaunchSpec
from tilelens_lsp.settings import check_target

TABLE_KEYS = ("file", "module", "let", "launch")


@dataclass(frozen=True)
class TomlError:
    """A problem in a toml config; `line`/`column` are 1-based positions in `path`."""

    path: Path
    line: int
    message: str
    column: int = 1
    kernel: str | None = None


@dataclass
class ConfigLaunches:
    launches: list[LaunchSpec] = field(default_factory=list)
    errors: list[TomlError] = field(default_factory=list)
    target: str | None = None
    config_path: Path | None = None


@dataclass(frozen=True)
class _Table:
    index: int
    data: Any
    header_line: int  # 1-based; 0 when the table has no `[[...]]` header (inline array)
    end_line: int


@dataclass
class _Config:
    path: Path
    origin: str
    lines: list[str]
    tables: list[_Table] = field(default_factory=list)
    target: str | None = None
    errors: list[TomlError] = field(default_factory=list)


# ---------------------------------------------------------------- finding the config


def _folders_up(start: Path, root: Path | None) -> Iterator[Path]:
    """`start` and its parents, up to `root` when `start` lies inside it, else to the filesystem root."""
    inside = root is not None and (start == root or root in start.parents)
    folder = start
    while True:
        yield folder
        if (inside and folder == root) or folder.parent == folder:
            return
        folder = folder.parent


def _declares_tilelens(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return "tilelens" in text  # a broken config of ours: load it so its error is reported
    return isinstance(tool, dict) and "tilelens" in tool


def find_config(file: Path, workspace_root: Path | None, config_file: Path | None = None) -> tuple[Path, str] | None:
    """(config path, origin): the explicit config, else the workspace `tilelens.toml`, else the
    nearest `pyproject.toml` above `file` that has a `[tool.tilelens]` table."""
    if config_file is not None:
        return Path(config_file), "config"
    root = workspace_root.resolve() if workspace_root is not None else None
    if root is not None and (root / "tilelens.toml").is_file():
        return root / "tilelens.toml", "tilelens.toml"
    for folder in _folders_up(Path(file).resolve().parent, root):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _declares_tilelens(candidate):
            return candidate, "pyproject"
    return None


# ---------------------------------------------------------------- loading


_HEADER = {
    "pyproject": re.compile(r"^\s*\[\[\s*tool\s*\.\s*tilelens\s*\.\s*launch\s*\]\]"),
    "tilelens.toml": re.compile(r"^\s*\[\[\s*launch\s*\]\]"),
}
_ANY_HEADER = re.compile(r"^\s*\[")
_DECODE_POSITION = re.compile(r"at line (\d+), column (\d+)")


def _sections(data: dict[str, Any], origin: str) -> list[tuple[str, dict[str, Any]]]:
    """(format, section) pairs holding `launch` and `target`: [tool.tilelens] or the top level."""
    tool = data.get("tool")
    tool_section = tool.get("tilelens") if isinstance(tool, dict) else None
    out: list[tuple[str, dict[str, Any]]] = []
    if origin in ("pyproject", "config") and isinstance(tool_section, dict):
        out.append(("pyproject", tool_section))
    if origin in ("tilelens.toml", "config") and ("launch" in data or "target" in data):
        out.append(("tilelens.toml", data))
    return out


_PARSED: dict[tuple[str, str], tuple[str, _Config]] = {}  # (path, origin): the text last parsed, and its parse
_PARSED_MOST = 16


def _load(path: Path, origin: str) -> _Config:
    """The config at `path`, read now and parsed once per text: a worker plans and analyses each file of
    a corpus against the one toml of all its launches (a quarter of a megabyte, 20 ms to parse), and
    the checker asks each file's target of it. What it returns is shared: never changed after this."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return _Config(path, origin, [], errors=[TomlError(path, 1, f"cannot read {path.name}: {e}")])
    key = (str(path), origin)
    kept = _PARSED.get(key)
    if kept is not None and kept[0] == text:
        return kept[1]
    cfg = _parse(path, origin, text)
    if len(_PARSED) >= _PARSED_MOST:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = (text, cfg)
    return cfg


def _parse(path: Path, origin: str, text: str) -> _Config:
    cfg = _Config(path, origin, text.splitlines())
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _DECODE_POSITION.search(str(e))
        line, column = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        cfg.errors.append(TomlError(path, line, f"invalid toml: {e}", column))
        return cfg
    for fmt, section in _sections(data, origin):
        _load_target(cfg, section, fmt)
        _load_tables(cfg, section.get("launch"), fmt)
    return cfg


def _load_target(cfg: _Config, section: dict[str, Any], fmt: str) -> None:
    if "target" not in section:
        return
    start = 1
    if fmt == "pyproject":
        start = next((i for i, line in enumerate(cfg.lines, 1) if re.match(r"^\s*\[\s*tool\s*\.\s*tilelens\s*\]", line)), 1)
    line = _key_line(cfg.lines, "target", start, len(cfg.lines)) or start
    value = section["target"]
    try:
        if not isinstance(value, str):
            raise ValueError(f'`target` must be a string such as "cuda:89", got {value!r}')
        cfg.target = check_target(value)
    except ValueError as e:
        cfg.errors.append(TomlError(cfg.path, line, str(e)))


def _load_tables(cfg: _Config, tables: Any, fmt: str) -> None:
    if tables is None:
        return
    if isinstance(tables, dict):
        tables = [tables]
    if not isinstance(tables, list):
        cfg.errors.append(TomlError(cfg.path, 1, "`launch` must be an array of tables ([[launch]])"))
        return
    headers = [i for i, line in enumerate(cfg.lines, 1) if _HEADER[fmt].match(line)]
    if len(headers) != len(tables):
        headers = [0] * len(tables)
    for index, (data, header) in enumerate(zip(tables, headers)):
        end = (
            next(
                (i - 1 for i in range(header + 1, len(cfg.lines) + 1) if _ANY_HEADER.match(cfg.lines[i - 1])), len(cfg.lines)
            )
            if header
            else 0
        )
        cfg.tables.append(_Table(len(cfg.tables), data, header, end))


def _key_line(lines: list[str], key: str, start: int, end: int) -> int:
    pattern = re.compile(rf"^\s*{key}\s*=")
    for i in range(max(start, 1), min(end, len(lines)) + 1):
        if pattern.match(lines[i - 1]):
            return i
    return 0


def _value_line(cfg: _Config, table: _Table, key: str) -> int:
    """The toml line of `key` in `table`, found by its header range or by searching its text."""
    if table.header_line:
        found = _key_line(cfg.lines, key, table.header_line, table.end_line)
        if found:
            return found
    value = table.data.get(key) if isinstance(table.data, dict) else None
    if isinstance(value, str) and value.strip():
        first = value.strip().splitlines()[0]
        for i, line in enumerate(cfg.lines, 1):
            if first in line:
                return i
    return table.header_line or 1


def _table_problems(table: _Table) -> list[tuple[str, str]]:
    """(key, message) for each structural problem of one table."""
    if not isinstance(table.data, dict):
        return [("", "each launch must be a table with `file` and `launch`")]
    out = [
        (k, f"unknown key '{k}' in a launch table (keys: {', '.join(TABLE_KEYS)})")
        for k in table.data
        if k not in TABLE_KEYS
    ]
    if "file" in table.data and "module" in table.data:
        out.append(("module", "a launch table names its kernel by `file` or by `module`, not both"))
    for key in ("file", "launch"):
        if key not in table.data and not (key == "file" and "module" in table.data):
            out.append(("", f"a launch table needs `{key}`"))
    for key in TABLE_KEYS:
        if key in table.data and not isinstance(table.data[key], str):
            out.append((key, f"`{key}` must be a string"))
    return out


def _table_module(table: _Table) -> str | None:
    """The module a table launches by name (`module =`, and no `file =`, which would win), or None."""
    module = table.data.get("module") if isinstance(table.data, dict) else None
    return module if isinstance(module, str) and module and "file" not in table.data else None


def _module_path(target: Path) -> Path:
    """`target` as a module's path: its package's folder for an `__init__.py`, else without `.py`."""
    return target.parent if target.name == "__init__.py" else target.with_suffix("")


def _table_file(cfg: _Config, table: _Table, python: str | None = None) -> Path | None:
    module = _table_module(table)
    if module is not None:
        return module_file(module, cfg.path.parent, python)
    value = table.data.get("file") if isinstance(table.data, dict) else None
    if not isinstance(value, str) or not value:
        return None
    path = Path(value).expanduser()
    return (path if path.is_absolute() else cfg.path.parent / path).resolve()


def _find_module(name: str, path: list[str]) -> str | None:
    """The source file of module `name` on `path`, looked up as `import` would (regular packages, then
    modules, then namespace packages) but by directory listing alone: no package's `__init__` runs and
    nothing is imported (importlib's PathFinder needs a namespace package's parent imported, and raises
    KeyError otherwise). Self-contained: it also runs in the worker's interpreter as a script."""
    import os  # here, not at the top: this function's source is the script it runs

    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found, namespace = None, []
        for folder in path:
            candidate = os.path.join(folder, part)
            if os.path.isfile(os.path.join(candidate, "__init__.py")):
                found = candidate
                break
            if os.path.isfile(candidate + ".py"):
                if last:
                    return os.path.abspath(candidate + ".py")
                return None  # a plain module has no submodules
            if os.path.isdir(candidate):
                namespace.append(candidate)
        if found is not None:
            if last:
                return os.path.abspath(os.path.join(found, "__init__.py"))
            path = [found]
        elif namespace and not last:
            path = namespace
        else:
            return None
    return None


_BATCHED: dict[tuple[str, str, str | None], str] = {}  # module_file's answers, found many at a time


def _resolve_in(names: list[str], folder: Path, python: str | None) -> None:
    """Find many modules in another interpreter with one process (not one per module: a config of
    a few hundred `module =` tables would otherwise start a few hundred interpreters)."""
    todo = [n for n in dict.fromkeys(names) if (n, str(folder), python) not in _BATCHED]
    if len(todo) < 2 or not python or os.path.abspath(python) == os.path.abspath(sys.executable):
        return
    script = (
        inspect.getsource(_find_module) + "import sys\npath = [p for p in sys.path if p] + [sys.argv[1]]\n"
        "for n in sys.argv[2:]:\n    print(_find_module(n, path) or '')\n"
    )
    try:
        proc = subprocess.run(
            [python, "-c", script, str(folder), *todo], capture_output=True, text=True, timeout=120, cwd=str(folder)
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    lines = proc.stdout.split("\n")[: len(todo)] if proc.returncode == 0 else []
    if len(lines) == len(todo):
        _BATCHED.update({(n, str(folder), python): line.strip() for n, line in zip(todo, lines)})


_FOUND: dict[tuple[str, str, str | None], Path | None] = {}  # module_file's answers (a corpus toml names
_FOUND_MOST = 8192  # hundreds of modules, each looked up per file)


def module_file(name: str, folder: Path, python: str | None = None) -> Path | None:
    """The source file `import name` would load in `python` (default: this interpreter), searching its
    `sys.path` and then `folder`; found by path alone (no package code runs), None when absent. Kept
    for the process (`forget_module` drops one answer)."""
    key = (name, str(folder), python)
    if key not in _FOUND:
        if len(_FOUND) >= _FOUND_MOST:
            _FOUND.pop(next(iter(_FOUND)))
        _FOUND[key] = _find_file(name, folder, python)
    return _FOUND[key]


def forget_module(name: str, folder: Path, python: str | None = None) -> None:
    """Look `name` up again next time: it may have been written or moved since."""
    _FOUND.pop((name, str(folder), python), None)
    _BATCHED.pop((name, str(folder), python), None)


def _find_file(name: str, folder: Path, python: str | None) -> Path | None:
    # not realpath: every venv's python links to the same binary, and it is the path that picks the venv
    if (name, str(folder), python) in _BATCHED:
        found = _BATCHED[(name, str(folder), python)]
    elif python and os.path.abspath(python) != os.path.abspath(sys.executable):
        script = (
            inspect.getsource(_find_module)
            + "import sys\nprint(_find_module(sys.argv[1], [p for p in sys.path if p] + [sys.argv[2]]) or '')\n"
        )
        try:
            proc = subprocess.run(
                [python, "-c", script, name, str(folder)], capture_output=True, text=True, timeout=60, cwd=str(folder)
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else ""
    else:
        found = _find_module(name, [p for p in sys.path if p] + [str(folder)]) or ""
    return Path(found).resolve() if found else None


# ---------------------------------------------------------------- evaluating


def _locator(cfg: _Config, key_line: int, value: str):
    """Map (line, col) inside a toml string to the toml file, by finding that line's text."""
    value_lines = value.split("\n")

    def locate(lineno: int, col: int) -> tuple[int, int]:
        want = value_lines[min(max(lineno, 1), len(value_lines)) - 1]
        if want.strip():
            for i in range(key_line + lineno - 1, min(key_line + len(value_lines) + 2, len(cfg.lines) + 1)):
                index = cfg.lines[i - 1].find(want) if i >= 1 else -1
                if index >= 0:
                    return i, index + col + 1
        return key_line, 1

    return locate


def _evaluate_table(cfg: _Config, table: _Table, known_kernels: set[str] | None, out: ConfigLaunches) -> None:
    env: dict[str, Any] = {}
    for key, mode in (("let", "bindings"), ("launch", "launch")):
        source = table.data.get(key)
        if not isinstance(source, str):
            continue
        source = textwrap.dedent(source).strip("\n")
        line = _value_line(cfg, table, key)
        launches, errors = run_statements(
            source,
            env,
            locate=_locator(cfg, line, source),
            end_line=line,
            origin=cfg.origin,
            known_kernels=known_kernels,
            mode=mode,
        )
        out.launches.extend(launches)
        out.errors.extend(TomlError(cfg.path, e.line, f"`{key}`: {e.message}", e.column, e.kernel) for e in errors)


def launches_by_table(config_file: Path, origin: str = "config") -> list[tuple[dict[str, Any], ConfigLaunches]]:
    """Each table of a toml file (its raw keys) with the launches it declares, evaluated on its own."""
    cfg = _load(config_file, origin)
    out = []
    for table in cfg.tables:
        found = ConfigLaunches()
        _evaluate_table(cfg, table, None, found)
        out.append((table.data, found))
    return out


def launches_for_file(
    path: Path, workspace_root: Path | None, config_file: Path | None = None, known_kernels: set[str] | None = None
) -> ConfigLaunches:
    """The toml-declared launches of `path` (see `find_config` for which toml is read).

    Errors are those of the config as a whole (invalid toml, bad target) and of the tables naming
    `path`; `config_errors` lists the problems of the tables naming no readable file.
    """
    found = find_config(path, workspace_root, config_file)
    if found is None:
        return ConfigLaunches()
    cfg = _load(*found)
    out = ConfigLaunches(errors=list(cfg.errors), target=cfg.target, config_path=cfg.path)
    target = Path(path).resolve()
    names = _ImportNames(target, cfg.path.parent)
    for table in cfg.tables:
        if not _launches(cfg, table, target, names):
            continue
        problems = _table_problems(table)
        out.errors.extend(
            TomlError(cfg.path, _value_line(cfg, table, key) if key else (table.header_line or 1), message)
            for key, message in problems
        )
        if not problems:
            _evaluate_table(cfg, table, known_kernels, out)
    return out


def may_launch(path: Path, workspace_root: Path | None) -> bool:
    """Whether a table of the config `launches_for_file` reads for `path` could launch it, told
    without resolving a module in any interpreter: a `file =` naming it, or a `module =` whose last
    name is the file's own (the worker resolves it). Over, never under: for a server deciding
    whether a file that names no kernel is worth the worker's look."""
    found = find_config(path, workspace_root)
    if found is None:
        return False
    cfg = _load(*found)
    target = Path(path).resolve()
    own = _module_path(target).name
    for table in cfg.tables:
        module = _table_module(table)
        if module is not None:
            if module.rpartition(".")[2] == own:
                return True
        elif _table_file(cfg, table) == target:
            return True
    return False


class _ImportNames:
    """The dotted names `import` could load the file `target` by (from this interpreter's `sys.path`
    and `folder`, as `module_file` searches), worked out on first use."""

    def __init__(self, target: Path, folder: Path) -> None:
        self.target, self.folder = target, folder
        self._names: set[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            self._names = set()
            stem = _module_path(self.target)
            for base in [p for p in sys.path if p] + [str(self.folder)]:
                try:
                    rel = stem.relative_to(os.path.realpath(base))
                except ValueError:
                    continue
                if rel.parts:
                    self._names.add(".".join(rel.parts))
        return name in self._names


def _launches(cfg: _Config, table: _Table, target: Path, names: _ImportNames) -> bool:
    """Whether `table` launches the file `target`. A `module =` table is resolved once per process
    (`module_file` keeps its answers), so where the kept answer is not `target` but the module's name
    is one `target` imports by, the module may be new since (written after the toml) or moved: it
    is looked up again, never trusted stale (a toml launch silently dropped would read as clean)."""
    if _table_file(cfg, table) == target:
        return True
    module = _table_module(table)
    if module is None or module not in names:
        return False
    forget_module(module, cfg.path.parent)
    return _table_file(cfg, table) == target


class ConfigError(ValueError):
    """A config that cannot be used at all (unreadable, invalid toml, bad target): exit 2 in the CLI."""


def _load_or_raise(config_file: Path) -> _Config:
    cfg = _load(Path(config_file), "config")
    if cfg.errors:
        first = cfg.errors[0]
        raise ConfigError(f"{first.path}:{first.line}: {first.message}")
    return cfg


def read_target(config_file: Path) -> str | None:
    """The config's `target`, or None; raises ConfigError for an unusable config."""
    return _load_or_raise(config_file).target


def files_in_config(config_file: Path, python: str | None = None) -> list[Path]:
    """Every file a config's launch tables name, resolved, in order, without repeats (`module =` tables
    resolved in `python`, the worker's interpreter, when given).

    Raises ConfigError for an unusable config.
    """
    cfg = _load_or_raise(config_file)
    files: list[Path] = []
    _resolve_in([m for m in map(_table_module, cfg.tables) if m is not None], cfg.path.parent, python)
    for table in cfg.tables:
        file = _table_file(cfg, table, python)
        if file is not None and file not in files:
            files.append(file)
    return files


def declared_by_folder(folder: Path, path: Path, python: str | None = None) -> bool:
    """Whether the launch tables of `folder`'s tilelens.toml (or its pyproject.toml's [tool.tilelens])
    name `path`: a workspace that declares launches of an installed module (`module =`) owns it."""
    for name, origin in (("tilelens.toml", "tilelens.toml"), ("pyproject.toml", "pyproject")):
        config = Path(folder) / name
        if not config.is_file() or (origin == "pyproject" and not _declares_tilelens(config)):
            continue
        cfg = _load(config, origin)
        # `module =` only: a `file =` that leaves the folder ("../elsewhere/k.py") gives it no file to import
        return any(
            isinstance(table.data, dict)
            and "module" in table.data
            and "file" not in table.data
            and _table_file(cfg, table, python) == Path(path).resolve()
            for table in cfg.tables
        )
    return False


def config_errors(config_file: Path, origin: str = "config", python: str | None = None) -> list[TomlError]:
    """Problems of a config independent of any one kernel file: invalid toml, bad target, tables
    without a usable `file`, files that do not exist, modules that `python` cannot find."""
    cfg = _load(Path(config_file), origin)
    errors = list(cfg.errors)
    for table in cfg.tables:
        file = _table_file(cfg, table, python)
        line = table.header_line or 1
        module = table.data.get("module") if isinstance(table.data, dict) else None
        if file is None and isinstance(module, str) and "file" not in table.data:
            errors.append(
                TomlError(
                    cfg.path,
                    _value_line(cfg, table, "module"),
                    f"`module`: no module named '{module}' in {python or sys.executable}",
                )
            )
        elif file is None:
            errors.extend(TomlError(cfg.path, line, m) for _, m in _table_problems(table))
        elif not file.is_file():
            errors.append(
                TomlError(
                    cfg.path,
                    _value_line(cfg, table, "file"),
                    f"`file`: {table.data['file']} does not exist (looked for {file})",
                )
            )
    return errors
