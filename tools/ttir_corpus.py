"""Compile every declared launch of a kernel file to TTIR through the product's own path.

Shared by `tests/golden/generate.py` (golden TTIR per release) and `tools/bulk_align.py
--compile-corpus` (a folder of TTIR texts for the reader's alignment check). The path is the one the
worker takes: `pipeline.import_module` (never `__main__`), `directives.parse_directives`,
`hostcompile.unwrap` / `expand_configs` / `bind` and `HostCompiler.compile_ttir`; the text is
`module.str()` with every loc path made portable (`locs.portable_ttir`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_TARGET = "cuda:89"


@dataclass
class CompiledLaunch:
    name: str            # `<kernel>__l<n>` (n: 1-based index among that kernel's launches in the file),
                         # `-c<k>` appended for the k-th config when the kernel has several
    text: str | None     # portable TTIR, or None when compiling failed
    error: str = ""      # why compiling failed (directive, binding or compile error)


def file_releases(text: str) -> set[str] | None:
    """`# golden: releases 3.6 3.8` limits a golden kernel file to those releases (None: all)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# golden:"):
            words = stripped[len("# golden:"):].split()
            if words and words[0] == "releases":
                return set(words[1:])
    return None


_COMPILERS: dict[str, object] = {}


def _compiler(target: str):
    from tilelens_lsp.hostcompile import HostCompiler

    if target not in _COMPILERS:
        _COMPILERS[target] = HostCompiler(target)
    return _COMPILERS[target]


def compile_file(path: Path, root: Path, target: str = DEFAULT_TARGET) -> list[CompiledLaunch]:
    """Every launch × config of one file; failures are entries with `error`, never exceptions."""
    from tilelens_lsp import directives
    from tilelens_lsp.hostcompile import bind, expand_configs, unwrap
    from tilelens_lsp.ttir.locs import default_mapper, portable_ttir
    from tilelens_lsp.model import ScalarSpec
    from tilelens_lsp.pipeline import ImportFailure, import_module

    path = Path(path).resolve()
    root = Path(root).resolve()
    text = path.read_text(encoding="utf-8")
    known = {k.name for k in directives.find_kernels(text)}
    launches, errors = directives.parse_directives(text, known or None)
    out: list[CompiledLaunch] = [CompiledLaunch(f"{e.kernel or 'directive'}__line{e.line}", None,
                                                f"directive error: {e.message}") for e in errors]
    if not launches:
        return out
    try:
        module = import_module(path, root)
    except ImportFailure as exc:
        return out + [CompiledLaunch("import", None, f"import failed: {exc.message}")]
    compiler = _compiler(target)
    mapper = default_mapper(root)
    counts: dict[str, int] = {}
    for launch in launches:
        counts[launch.kernel] = counts.get(launch.kernel, 0) + 1
        label = f"{launch.kernel}__l{counts[launch.kernel]}"
        try:
            chain = unwrap(getattr(module, launch.kernel))
            configs = expand_configs(chain, launch)
        except Exception as exc:  # noqa: BLE001 - reported per launch
            out.append(CompiledLaunch(label, None, f"binding failed: {type(exc).__name__}: {exc}"))
            continue
        forced = {n for n, a in list(zip([p.name for p in chain.jit.params], launch.args)) + list(launch.kwargs)
                  if isinstance(a, ScalarSpec) and a.kind == "i64"}
        for k, binding in enumerate(configs):
            name = label if len(configs) == 1 else f"{label}-c{k}"
            try:
                bound = bind(chain.jit, binding, compiler.backend, forced)
                mlir_module, _ctx = compiler.compile_ttir(chain.jit, bound)
            except Exception as exc:  # noqa: BLE001 - a compile error is an entry, not a crash
                message = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
                out.append(CompiledLaunch(name, None, f"compile failed: {type(exc).__name__}: {message}"))
                continue
            out.append(CompiledLaunch(name, portable_ttir(mlir_module.str(), mapper)))
    return out


def kernel_files(folders: list[Path]) -> list[Path]:
    """Every `.py` with a `# tilelens:` directive under the folders (or the files themselves), sorted."""
    files: list[Path] = []
    for folder in folders:
        folder = Path(folder)
        candidates = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
        for f in candidates:
            if "__pycache__" in f.parts:
                continue
            try:
                if "tilelens:" in f.read_text(encoding="utf-8", errors="replace"):
                    files.append(f)
            except OSError:
                continue
    return files
