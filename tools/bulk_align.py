#!/usr/bin/env python3
"""Bulk alignment of the TTIR reader against Triton's own MLIR bindings.

    tools/bulk_align.py DIR_OR_FILE ...                      # every *.ttir below (e.g. ~/.triton/cache)
    tools/bulk_align.py --compile-corpus tests/conformance/kernels tests/golden/kernels samples
    tools/bulk_align.py tests/golden/3.9 --compile-corpus samples --dump /tmp/ttir --json

For every TTIR text, the reader (`tilelens_lsp.ttir.reader.parse_module`) reads it and its op walk is
checked against the module the bindings parse from the same file (`ir.parse_mlir_module(path,
context)`, `ttir.check_alignment`). Each file is counted as

- `aligned`: the reader read it and agrees with the bindings op by op;
- `misaligned`: the reader read it but disagrees (by the first differing op pair);
- `refused`: the reader refused the text (by what it could not read);
- `unparseable`: the bindings cannot parse it either (not TTIR of this release: not the reader's fault).

`--compile-corpus DIR...` first compiles every declared launch (each autotune config) of every
`.py` with `# tilelens:` directives below the folders, through the product's own host-compile path,
dumps the TTIR texts into `--dump` (default: a temporary folder, removed afterwards), and adds them to
the run; launches that do not compile are counted as `compile-failed`.

Exit status: 0 when nothing is misaligned or refused, 1 otherwise, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@dataclass
class Tally:
    files: int = 0
    aligned: int = 0
    misaligned: Counter = field(default_factory=Counter)
    refused: Counter = field(default_factory=Counter)
    unparseable: Counter = field(default_factory=Counter)
    compile_failed: Counter = field(default_factory=Counter)
    compiled: int = 0
    skipped: int = 0  # corpus files marked for other releases only
    examples: dict[str, list[str]] = field(default_factory=dict)  # kind -> a few file: message lines

    def note(self, bucket: str, kind: str, where: str, message: str) -> None:
        getattr(self, bucket)[kind] += 1
        shown = self.examples.setdefault(f"{bucket}: {kind}", [])
        if len(shown) < 3:
            shown.append(f"{where}: {message}")

    def to_json(self, triton: str) -> dict:
        return {
            "triton": triton,
            "files": self.files,
            "aligned": self.aligned,
            "misaligned": sum(self.misaligned.values()),
            "refused": sum(self.refused.values()),
            "unparseable": sum(self.unparseable.values()),
            "compiled": self.compiled,
            "skipped_files": self.skipped,
            "compile_failed": sum(self.compile_failed.values()),
            "by_kind": {
                b: dict(sorted(getattr(self, b).items())) for b in ("misaligned", "refused", "unparseable", "compile_failed")
            },
            "examples": self.examples,
        }


def mlir_bindings():
    """An MLIR context with Triton's dialects (and the default backend's) loaded."""
    from triton._C.libtriton import ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    try:
        from triton.compiler.compiler import make_backend

        from tilelens_lsp.compile.driver import parse_target

        make_backend(parse_target("cuda:89")).load_dialects(ctx)
    except Exception:  # noqa: BLE001 - plain TTIR needs only Triton's own dialects
        pass
    parse = getattr(ir, "parse_mlir_module", None)
    if parse is None:  # pragma: no cover - every tested release has it
        raise SystemExit("this Triton's bindings have no ir.parse_mlir_module")
    return ctx, parse


def _mismatch_kind(message: str) -> str:
    """`op #12: bindings see tt.load (...), the text reader read tt.store (...)` → `tt.load/tt.store`."""
    m = re.search(r"bindings see (\S+) .*?read (\S+) ", message)
    if m:
        return f"{m.group(1)} vs {m.group(2)}"
    if "the bindings walk" in message:
        return "op count"
    return "other"


def _refusal_kind(message: str) -> str:
    text = re.sub(r"^TTIR line \d+: ", "", message)
    return text.split(":")[0][:60]


def align_file(path: Path, ctx, parse, tally: Tally, label: str) -> str:
    from tilelens_lsp.refusal import Refusal
    from tilelens_lsp.ttir import reader as ttir

    tally.files += 1
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        tally.note("unparseable", "unreadable file", label, str(exc))
        return "unparseable"
    try:
        mlir_module = parse(str(path), ctx)
    except Exception as exc:  # noqa: BLE001 - the bindings raise whatever MLIR reports
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        tally.note("unparseable", "bindings cannot parse", label, first[:200])
        return "unparseable"
    try:
        module = ttir.parse_module(text)
    except Refusal as refusal:
        tally.note("refused", _refusal_kind(refusal.message), label, refusal.message[:300])
        return "refused"
    except Exception as exc:  # noqa: BLE001 - a reader crash is a refusal too, but a loud one
        tally.note("refused", f"reader crash {type(exc).__name__}", label, str(exc)[:300])
        return "refused"
    try:
        ttir.check_alignment(module, mlir_module)
    except Refusal as refusal:
        tally.note("misaligned", _mismatch_kind(refusal.message), label, refusal.message[:300])
        return "misaligned"
    tally.aligned += 1
    return "aligned"


def ttir_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.ttir") if f.is_file()))
    return out


def _find_root(start: Path) -> Path:
    start = start.resolve()
    for folder in [start, *start.parents]:
        if any((folder / m).exists() for m in ("tilelens.toml", "pyproject.toml", ".git")):
            return folder
    return start


def compile_corpus(
    folders: list[Path], dump: Path, root: Path, target: str, tally: Tally, verbose: bool = False
) -> list[Path]:
    import triton
    from ttir_corpus import compile_file, file_releases, kernel_files

    from tilelens_lsp.releases import release_of

    release = release_of(triton.__version__)
    written: list[Path] = []
    for f in kernel_files(folders):
        allowed = file_releases(f.read_text(encoding="utf-8"))
        if allowed is not None and release not in allowed:
            tally.skipped += 1  # `# golden: releases ...` excludes this release (e.g. block pointers in 3.9)
            continue
        try:
            rel = f.resolve().relative_to(root)
        except ValueError:
            rel = Path(f.name)
        stem = "__".join(rel.with_suffix("").parts)
        for launch in compile_file(f, root, target):
            if launch.text is None:
                kind = launch.error.split(":")[0]
                tally.note("compile_failed", kind, f"{rel}:{launch.name}", launch.error[:300])
                if verbose:
                    print(f"compile-failed {rel}:{launch.name}: {launch.error}", file=sys.stderr)
                continue
            tally.compiled += 1
            out = dump / f"{stem}__{launch.name}.ttir"
            out.write_text(launch.text, encoding="utf-8")
            written.append(out)
    return written


def run(
    ttir_paths: list[Path],
    corpus: list[Path],
    dump: Path | None,
    root: Path | None,
    target: str = "cuda:89",
    verbose: bool = False,
) -> Tally:
    import warnings

    warnings.filterwarnings("ignore", module="triton.*")
    tally = Tally()
    files = ttir_files(ttir_paths)
    tmp = None
    if corpus:
        if dump is None:
            tmp = tempfile.TemporaryDirectory(prefix="tilelens-bulk-")
            dump = Path(tmp.name)
        dump.mkdir(parents=True, exist_ok=True)
        root = root or _find_root(corpus[0])
        files += compile_corpus(corpus, dump, root.resolve(), target, tally, verbose)
    try:
        ctx, parse = mlir_bindings()
        for f in files:
            verdict = align_file(f, ctx, parse, tally, _label(f, dump))
            if verbose:
                print(f"{verdict:11} {_label(f, dump)}", file=sys.stderr)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return tally


def _label(path: Path, dump: Path | None) -> str:
    if dump is not None:
        try:
            return str(path.resolve().relative_to(dump.resolve()))
        except ValueError:
            pass
    return str(path)


def summary_lines(tally: Tally, triton: str) -> list[str]:
    def kinds(c: Counter) -> str:
        return ", ".join(f"{k}: {n}" for k, n in sorted(c.items())) if c else ""

    lines = [
        f"bulk-align (Triton {triton}): {tally.files} TTIR files, {tally.aligned} aligned, "
        f"{sum(tally.misaligned.values())} misaligned, {sum(tally.refused.values())} refused, "
        f"{sum(tally.unparseable.values())} unparseable"
        + (
            f"; corpus: {tally.compiled} compiled, {sum(tally.compile_failed.values())} compile-failed, "
            f"{tally.skipped} file(s) for other releases skipped"
            if tally.compiled or tally.compile_failed or tally.skipped
            else ""
        )
    ]
    for bucket in ("misaligned", "refused", "unparseable", "compile_failed"):
        c = getattr(tally, bucket)
        if c:
            lines.append(f"  {bucket.replace('_', '-')}: {kinds(c)}")
    for kind, shown in tally.examples.items():
        for line in shown:
            lines.append(f"    [{kind}] {line}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bulk_align.py", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="folders of *.ttir files (recursive) or files")
    parser.add_argument(
        "--compile-corpus",
        nargs="+",
        type=Path,
        default=[],
        metavar="DIR",
        help="compile every declared launch of the kernel files below DIR first",
    )
    parser.add_argument("--dump", type=Path, help="folder for the corpus's TTIR (default: temporary)")
    parser.add_argument("--root", type=Path, help="workspace root for imports and portable locs")
    parser.add_argument("--target", default="cuda:89")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per file on stderr")
    args = parser.parse_args(argv)
    if not args.paths and not args.compile_corpus:
        parser.error("give TTIR folders or --compile-corpus DIR")
    missing = [str(p) for p in args.paths + args.compile_corpus if not p.exists()]
    if missing:
        print(f"bulk_align.py: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    import triton

    start = time.perf_counter()
    tally = run(args.paths, args.compile_corpus, args.dump, args.root, args.target, args.verbose)
    if args.json:
        doc = tally.to_json(triton.__version__)
        doc["seconds"] = round(time.perf_counter() - start, 2)
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        for line in summary_lines(tally, triton.__version__):
            print(line)
    return 1 if tally.misaligned or tally.refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
