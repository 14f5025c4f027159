"""Compile every declared launch of a kernel file to TTIR through the product's own path.

Shared by `tests/golden/generate.py` (golden TTIR per release) and `tools/bulk_align.py
--compile-corpus` (a folder of TTIR texts for the reader's alignment check). The path is the one the
worker takes: `pipeline.import_module` (never `__main__`), `launches.scanner.parse_directives` and
`compile.compiler.compile_launch` (the pipeline's own entry); the text is
`module.str()` with every loc path made portable (`locs.portable_ttir`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_TARGET = "cuda:89"


@dataclass
class CompiledLaunch:
    name: str  # `<kernel>__l<n>` (n: 1-based index among that kernel's launches in the file),
    # `-c<k>` appended for the k-th config when the kernel has several
    text: str | None  # portable TTIR, or None when compiling failed
    error: str = ""  # why compiling failed (directive, binding or compile error)


def file_releases(text: str) -> set[str] | None:
    """`# golden: releases 3.6 3.8` limits a golden kernel file to those releases (None: all)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# golden:"):
            words = stripped[len("# golden:") :].split()
            if words and words[0] == "releases":
                return set(words[1:])
    return None


def compile_file(path: Path, root: Path, target: str = DEFAULT_TARGET) -> list[CompiledLaunch]:
    """Every launch × config of one file; failures are entries with `error`, never exceptions."""
    from tilelens_lsp.compile.compiler import compile_launch
    from tilelens_lsp.launches.kernels import find_kernels
    from tilelens_lsp.launches.scanner import parse_directives
    from tilelens_lsp.pipeline import ImportFailure, import_module
    from tilelens_lsp.ttir.locs import default_mapper, portable_ttir

    path = Path(path).resolve()
    root = Path(root).resolve()
    text = path.read_text(encoding="utf-8")
    known = {k.name for k in find_kernels(text)}
    launches, errors = parse_directives(text, known or None)
    out: list[CompiledLaunch] = [
        CompiledLaunch(f"{e.kernel or 'directive'}__line{e.line}", None, f"directive error: {e.message}") for e in errors
    ]
    if not launches:
        return out
    try:
        module = import_module(path, root)
    except ImportFailure as exc:
        return out + [CompiledLaunch("import", None, f"import failed: {exc.message}")]
    mapper = default_mapper(root)
    counts: dict[str, int] = {}
    for launch in launches:
        counts[launch.kernel] = counts.get(launch.kernel, 0) + 1
        label = f"{launch.kernel}__l{counts[launch.kernel]}"
        try:
            kernel_obj = getattr(module, launch.kernel)
        except Exception as exc:  # noqa: BLE001 - reported per launch
            out.append(CompiledLaunch(label, None, f"binding failed: {type(exc).__name__}: {exc}"))
            continue
        # each config's text (or error) as it compiles, so one MLIR module is alive at a time
        compiled: list[tuple[str | None, Exception | None]] = []
        for c in compile_launch(kernel_obj, launch, target):
            if c.failed_at == "configs":
                out.append(CompiledLaunch(label, None, f"binding failed: {type(c.error).__name__}: {c.error}"))
                break
            compiled.append((None, c.error) if c.error is not None else (portable_ttir(c.module.str(), mapper), None))
        for k, (ttir_text, error) in enumerate(compiled):
            name = label if len(compiled) == 1 else f"{label}-c{k}"
            if error is not None:  # a binding or compile error is an entry, not a crash
                message = str(error).strip().splitlines()[-1] if str(error).strip() else ""
                out.append(CompiledLaunch(name, None, f"compile failed: {type(error).__name__}: {message}"))
                continue
            out.append(CompiledLaunch(name, ttir_text))
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
