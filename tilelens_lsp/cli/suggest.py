"""`tilelens-lsp suggest FILE`: an example launch that compiles, for each kernel that has none (TL100).

The command-line face of the editor's quick fix "Declare an example launch": the worker imports the file,
synthesizes a launch from each kernel's signature and TTIR and compiles it as written (suggest.py). By
default the directive lines are printed to paste; `--write` inserts them above each kernel, and touches
the file only when every block was found against the text it read, replacing it atomically.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from tilelens_lsp import releases
from tilelens_lsp.cli.options import settings_from_args
from tilelens_lsp.launches.kernels import find_kernels, kernel_head
from tilelens_lsp.model import Suggestion
from tilelens_lsp.paths import find_root
from tilelens_lsp.worker.process import Worker, WorkerUnavailable


def add_parser(sub) -> None:
    p = sub.add_parser("suggest", help="print (or insert) an example launch that compiles for each kernel without one")
    p.add_argument("file", type=Path, help="a Python file with @triton.jit kernels")
    p.add_argument(
        "--kernel",
        action="append",
        metavar="NAME",
        help="only this kernel (repeatable; default: every kernel that has no declared launch)",
    )
    p.add_argument("--write", action="store_true", help="insert the launches above their kernels in FILE")
    p.add_argument("--target", help="compile target, e.g. cuda:89 (default) or cuda:90")
    p.add_argument("--python", help="interpreter for the worker (default: this one)")
    p.add_argument("--timeout", type=float, help="seconds the worker may spend on the file")
    p.add_argument("--root", type=Path, help="workspace root (default: nearest marker)")


def run_suggest(args) -> int:
    path = args.file.resolve()
    if not path.is_file():
        print(f"tilelens-lsp: no such file: {args.file}", file=sys.stderr)
        return 2
    try:
        settings = settings_from_args(args)
        text = path.read_bytes().decode("utf-8")  # as it is: line endings included
    except (ValueError, OSError) as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    root = args.root.resolve() if args.root else find_root(path.parent)
    worker = Worker(settings)
    try:
        hello = worker.start()
        refused = releases.gate(hello.triton)
        if refused is not None:
            print(f"tilelens-lsp: {refused.message}", file=sys.stderr)
            return 2
        found = worker.suggest(path, root, args.kernel, settings=settings)
    except WorkerUnavailable as exc:
        print(f"tilelens-lsp: {exc}", file=sys.stderr)
        return 2
    finally:
        worker.finish()
    return _report(args, path, text, found)


def _report(args, path: Path, text: str, found: list[Suggestion]) -> int:
    if not found:
        has_kernels = any(not k.is_helper for k in find_kernels(text))
        print(f"{args.file}: " + ("every kernel has a declared launch" if has_kernels else "no @triton.jit kernel"))
        return 0
    good = [s for s in found if s.lines]
    for s in found:
        if not s.lines:
            print(f"tilelens-lsp: {args.file}: {s.kernel}: {s.error}", file=sys.stderr)
    if args.write:
        if good:
            try:
                _insert(path, text, good)
            except (OSError, ValueError) as exc:
                print(f"tilelens-lsp: {args.file} left unchanged: {exc}", file=sys.stderr)
                return 2
            print(f"{args.file}: declared {len(good)} example launch(es): " + ", ".join(s.kernel for s in good))
    else:
        for s in good:
            head = kernel_head(text, s.kernel)
            print(f"# {args.file}:{head[0] if head else '?'}: above {s.kernel}")
            print("\n".join(s.lines) + "\n")
    return 0 if len(good) == len(found) else 1


def _insert(path: Path, text: str, found: list[Suggestion]) -> None:
    """Each block above its kernel, bottom first so earlier line numbers hold; a read-only file is refused."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)  # the line breaks ast counts, kept
    heads = []
    for s in found:
        head = kernel_head(text, s.kernel)
        if head is None:
            raise ValueError(f"no function {s.kernel} in it")
        heads.append((head, s))
    for (first, indent), s in sorted(heads, key=lambda h: -h[0][0]):
        lines[first - 1 : first - 1] = [f"{indent}{x}{newline}" for x in s.lines]
    if not path.stat().st_mode & 0o222:
        raise ValueError("it is read-only")
    replace_if_unchanged(path, text, "".join(lines).encode("utf-8"))


def replace_if_unchanged(path: Path, expected: str, data: bytes) -> None:
    """Make `data` the content of `path`, if it still reads `expected` (checked under a lock on it).

    Atomically: `data` goes to a temporary file in the same folder, which then replaces `path`
    (`os.replace`) with the file's permission bits (and its owner, where this process may set it),
    so a failure part-way (a full disk, an interruption) leaves the original bytes as they were. A
    file with other hard links is written in place instead, so that every name of it sees the
    launches: there a failure part-way can leave it half written."""
    with open(path, "r+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        if f.read().decode("utf-8") != expected:
            raise ValueError("it changed while the launches were being found")
        st = os.fstat(f.fileno())
        if st.st_nlink > 1:
            f.seek(0)
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
            return
        _replace(path, data, st)


def _replace(path: Path, data: bytes, st: os.stat_result) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tilelens-tmp")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # another user's file stays theirs, where we may say so
                os.fchown(fd, st.st_uid, st.st_gid)
        os.fchmod(fd, stat.S_IMODE(st.st_mode))  # after the owner: a chown may clear set-id bits
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
