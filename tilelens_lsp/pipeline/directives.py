"""What a file declares, read from its text alone: its kernels, its directive launches and their
errors, its toml launches, the kernels no launch names (TL100) and a cost estimate per kernel.

`Directives` keeps the parse of the last few texts (by their hash) and the evaluation of the last
few sets of directive lines: a save analysed in parts, or planned and then analysed, reads the same
text several times, and a save that changed code, not directives, evaluates none again. Nothing
here imports the user's module.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from tilelens_lsp.launches.kernels import KernelDef, find_kernels, parse_file
from tilelens_lsp.launches.params import check_keywords
from tilelens_lsp.launches.scanner import directive_blocks, parse_directives
from tilelens_lsp.launches.toml import ConfigLaunches, TomlError, launches_for_file
from tilelens_lsp.model import DirectiveError, LaunchSpec

Blocks = tuple[tuple[tuple[int, int, str], ...], ...]
Parsed = tuple[tuple[KernelDef, ...], tuple[LaunchSpec, ...], tuple[DirectiveError, ...]]

TEXTS_KEPT = 4  # parses kept, by text hash
EVALUATIONS_KEPT = 8  # evaluated sets of directive lines kept


@dataclass
class Directives:
    """The parse of the last few texts and the evaluation of the last few sets of directives."""

    parsed: dict[str, Parsed] = field(default_factory=dict)
    evaluated: dict[tuple[Blocks, frozenset[str]], tuple[tuple[LaunchSpec, ...], tuple[DirectiveError, ...]]] = field(
        default_factory=dict
    )
    parses: int = 0  # texts parsed (tests: a text is parsed once)

    def of(self, text: str) -> Parsed:
        """The file's kernels, directive launches and directive errors."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        found = self.parsed.get(key)
        if found is None:
            self.parses += 1
            kernels = tuple(find_kernels(text))
            known = frozenset(k.name for k in kernels)
            launches, errors = self._evaluate(tuple(directive_blocks(text)), known)
            found = (kernels, launches, errors)
            _bounded_put(self.parsed, key, found, TEXTS_KEPT)
        return found

    def _evaluate(self, blocks: Blocks, known: frozenset[str]) -> tuple[tuple[LaunchSpec, ...], tuple[DirectiveError, ...]]:
        """The launches and errors of these directive blocks (their lines, columns and text: all that
        `parse_directives` reads of a file) for these kernel names."""
        key = (blocks, known)
        if key not in self.evaluated:
            launches, errors = parse_directives(_blocks_text(blocks), set(known) or None)
            _bounded_put(self.evaluated, key, (tuple(launches), tuple(errors)), EVALUATIONS_KEPT)
        return self.evaluated[key]


def _bounded_put(table: dict, key, value, limit: int) -> None:
    if len(table) >= limit:
        table.pop(next(iter(table)))
    table[key] = value


def _blocks_text(blocks: Blocks) -> str:
    """A file of only these directive lines, each at its own line and column."""
    lines: dict[int, str] = {}
    for block in blocks:
        for line, col, text in block:
            lines[line] = " " * max(0, col - 10) + "#tilelens:" + text
    return "\n".join(lines.get(i, "") for i in range(1, max(lines, default=0) + 1)) + "\n"


def declared_launches(
    path: Path,
    text: str,
    workspace_root: Path | None,
    config_file: Path | None = None,
    directives: Directives | None = None,
) -> tuple[list[KernelDef], list[LaunchSpec], list[DirectiveError], ConfigLaunches]:
    """(the file's kernels, its directive launches, its directive errors, its toml launches)."""
    kernels, directive_launches, errors = (directives or Directives()).of(text)
    known = {k.name for k in kernels}
    launches, misnamed = check_keywords(list(kernels), list(directive_launches))
    toml = launches_for_file(path, workspace_root, config_file, known or None)
    if toml.launches and toml.config_path is not None:  # a toml launch's keywords too, at its toml line
        toml.launches, bad = check_keywords(list(kernels), toml.launches)
        toml.errors.extend(TomlError(toml.config_path, e.line, f"`launch`: {e.message}", e.column, e.kernel) for e in bad)
    return list(kernels), list(launches), list(errors) + misnamed, toml


def unlaunched(kernels: list[KernelDef], launches: list[LaunchSpec], errors: list) -> list[KernelDef]:
    """The kernels TL100 names: no launch (nor a broken directive) names them, and they are no helper."""
    launched = {launch.kernel for launch in launches} | {e.kernel for e in errors if e.kernel}
    return [k for k in kernels if k.name not in launched and not k.is_helper]


UNKNOWN_CONFIGS = 8  # the estimate for configs computed at run time


def config_counts(text: str) -> dict[str, int]:
    """Per function of the file, how many distinct compiles its autotune configs ask for: the cost
    estimate `plan_path` gives. Configs that differ only in launch options (warps, stages, CTAs) bind to
    one TTIR and are analysed once, so a list is counted by its distinct constexpr dicts, and a
    comprehension by the product of the literal ranges its constexprs are drawn from
    (`{'BT': BT} for BT in [32, 64] for num_warps in [2, 4, 8]` is 2); configs computed at run time
    count as UNKNOWN_CONFIGS. An autotuner is `autotune(...)` or any decorator call given `configs=`:
    packages wrap Triton's in their own (FlagGems' `libtuner`)."""
    tree = parse_file(text)
    out: dict[str, int] = {}
    if tree is None:
        return out
    lengths = _module_sequences(tree)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in fn.decorator_list:
            if not isinstance(dec, ast.Call):
                continue
            named = getattr(dec.func, "attr", getattr(dec.func, "id", "")) == "autotune"
            if not named and not any(k.arg == "configs" for k in dec.keywords):
                continue
            configs = next((k.value for k in dec.keywords if k.arg == "configs"), dec.args[0] if dec.args else None)
            out[fn.name] = _distinct_configs(configs, lengths)
    return out


def _distinct_configs(configs: ast.expr | None, lengths: dict[str, int]) -> int:
    if isinstance(configs, (ast.List, ast.Tuple)):
        return max(1, len({ast.dump(_constexprs(e)) for e in configs.elts}))
    if isinstance(configs, ast.ListComp):
        # a generator counts when its variables reach the constexprs, directly or through a later
        # generator's range or filter; the filters are not evaluated (an upper bound)
        used = _names(_constexprs(configs.elt))
        count = 1
        for gen in reversed(configs.generators):
            if not _names(gen.target) & used:
                continue
            length = _length(gen.iter, lengths)
            if length is None:
                return UNKNOWN_CONFIGS
            count *= length
            used |= _names(gen.iter) | {n for cond in gen.ifs for n in _names(cond)}
        return max(1, count)
    return UNKNOWN_CONFIGS


def _constexprs(config: ast.expr) -> ast.expr:
    """The constexpr dict of a `Config(...)` call (its first argument, or `kwargs=`), else the whole."""
    if isinstance(config, ast.Call):
        if config.args:
            return config.args[0]
        return next((k.value for k in config.keywords if k.arg == "kwargs"), ast.Dict(keys=[], values=[]))
    return config


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _length(node: ast.expr, lengths: dict[str, int]) -> int | None:
    """The number of items a comprehension's range yields, where the source says it (a literal, a
    module-level literal sequence, `range` of literal ints); None otherwise."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return len(node.elts)
    if isinstance(node, ast.Name):
        return lengths.get(node.id)
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "range" and not node.keywords:
        bounds = [a.value for a in node.args if isinstance(a, ast.Constant) and type(a.value) is int]
        if len(bounds) == len(node.args) and 1 <= len(bounds) <= 3 and (len(bounds) < 3 or bounds[2] != 0):
            return len(range(*bounds))
    return None


def _module_sequences(tree: ast.Module) -> dict[str, int]:
    """The lengths of the literal sequences bound to a name at module level (`BK_LIST = [32, 64]`); a
    name bound more than once is left out (which binding a kernel sees depends on run time)."""
    lengths: dict[str, int] = {}
    seen: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id in seen:
                lengths.pop(target.id, None)
                continue
            seen.add(target.id)
            if isinstance(value, (ast.List, ast.Tuple)):
                lengths[target.id] = len(value.elts)
    return lengths
