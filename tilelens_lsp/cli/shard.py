"""`check --shard K/N` and `tilelens-lsp merge`: one share of the launches per CI job, and the shares
put back together.

Which launches a shard holds is worker/pool.py's (a hash of each launch's identity). Here: the flag,
the marks a shard's output carries (`"shard": {"index": K, "count": N}` in JSON; in SARIF the run's
`automationDetails.id`, the category GitHub code scanning keeps each shard's alerts under), and the
merge of the shards' JSON documents into the document the unsharded run prints (SARIF documents
merge into one document with one run per shard). Nothing here analyses, starts a worker or prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.worker.pool import Share

MAX_SHARDS = 4096


def parse_share(text: str) -> Share:
    """`K/N` with 1 <= K <= N: shard K of N."""
    index, slash, count = text.partition("/")
    try:
        k, n = int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard takes K/N (e.g. 2/8), got {text!r}") from None
    if not slash or not 1 <= k <= n <= MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 1 <= K <= N <= {MAX_SHARDS}, got {text!r}")
    return Share(k, n)


def add_shard_flag(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "--shard",
        type=parse_share,
        metavar="K/N",
        help="check only shard K of N (a stable share of the launches, for a CI matrix); "
        "`tilelens-lsp merge` puts the shards' JSON back together",
    )


def add_merge_parser(sub) -> None:
    merge = sub.add_parser("merge", help="merge the JSON (or SARIF) output of `check --shard K/N` runs")
    merge.add_argument("documents", nargs="+", type=Path, help="one output file per shard")
    merge.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="json",
        help="output format (from JSON shards; SARIF shards merge into SARIF only)",
    )
    merge.add_argument(
        "--partial", action="store_true", help="merge whatever shards are given (default: every shard 1..N exactly once)"
    )


def annotate(doc: dict[str, Any], fmt: str, share: Share | None) -> dict[str, Any]:
    """A shard's JSON or SARIF document, marked with the shard it holds."""
    if share is None:
        return doc
    if fmt == "json":
        return {**doc, "shard": {"index": share.index, "count": share.count}}
    if fmt == "sarif":
        for run in doc.get("runs", []):
            run["automationDetails"] = {"id": f"tilelens-shard-{share.index}-of-{share.count}/"}
    return doc


class MergeError(ValueError):
    """The documents do not make one whole run (another tool or Triton, a shard missing or repeated)."""


def load(paths: list[Path]) -> list[dict[str, Any]]:
    docs = []
    for p in paths:
        try:
            docs.append(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise MergeError(f"{p}: not a JSON document: {exc}") from None
    return docs


def is_sarif(doc: dict[str, Any]) -> bool:
    return "runs" in doc and "files" not in doc


def merge_json(docs: list[dict[str, Any]], partial: bool = False) -> tuple[list[FileResult], str, str]:
    """(the files, the Triton version, the target) of the whole run the shards' JSON documents make.

    Every shard lists every file (with the launches it holds); a file's launches are put back in the
    order the unsharded run reports them (the order they are declared), and the file's own
    diagnostics come from the shard of its first launch, with what other shards add (an import
    error each of them saw) after them."""
    _check_whole(docs, partial)
    files: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        for f in doc["files"]:
            files.setdefault(f["path"], []).append(f)
    return (
        [_merge_file(path, parts) for path, parts in files.items()],
        docs[0].get("triton", ""),
        docs[0].get("target", ""),
    )


def _check_whole(docs: list[dict[str, Any]], partial: bool) -> None:
    if not docs:
        raise MergeError("no documents to merge")
    for key in ("tool", "version", "triton", "target"):
        values = {d.get(key) for d in docs}
        if len(values) > 1:
            raise MergeError(f"the documents differ in {key!r}: {sorted(map(str, values))}")
    given = [d.get("shard") for d in docs]
    shards: list[dict[str, Any]] = [s for s in given if isinstance(s, dict)]
    if len(shards) != len(given):
        raise MergeError("every document must come from `check --shard K/N --format json`")
    counts = {s["count"] for s in shards}
    if len(counts) > 1:
        raise MergeError(f"the documents come from different shard counts: {sorted(counts)}")
    indices = sorted(s["index"] for s in shards)
    if len(set(indices)) != len(indices):
        raise MergeError(f"a shard is given twice: {indices}")
    if not partial and indices != list(range(1, counts.pop() + 1)):
        raise MergeError(f"shards missing: got {indices} (pass --partial to merge them anyway)")


def _merge_file(path: str, parts: list[dict[str, Any]]) -> FileResult:
    keyed = []
    results = []
    for part in parts:
        result = FileResult.from_json({k: v for k, v in part.items()})
        results.append(result)
        indices = [launch.get("index") for launch in part.get("launches", [])]
        if any(not isinstance(i, int) for i in indices):
            raise MergeError(f"{path}: a launch without its declared index (not a `check --shard` document)")
        keyed += list(zip(indices, result.launches))
    # stable: the configs of one launch (all in one shard) keep their order
    launches = tuple(launch for _, launch in sorted(keyed, key=lambda kv: kv[0]))
    ordered = sorted(results, key=lambda r: -len(r.diagnostics))  # the first launch's shard holds them all
    diags: list[Diagnostic] = []
    for result in ordered:
        diags += [d for d in result.diagnostics if d not in diags]
    located = {k: v for result in results for k, v in result.absolute_paths.items()}
    return FileResult(path, launches, tuple(diags), located)


def absolute_path(docs: list[dict[str, Any]], path: str) -> str:
    """The `absolute_path` the shards' JSON gives the file `path` ("" where none does)."""
    return next(
        (f.get("absolute_path", "") for d in docs for f in d["files"] if f["path"] == path and f.get("absolute_path")), ""
    )


SUMMED = ("launches", "analyzed", "clean", "with_findings", "refused", "failed")


def merge_summaries(docs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The unsharded run's summary: the shards' launch counts added up (every launch is in one
    shard), files and files not imported counted once per file."""
    given = [d.get("summary") for d in docs]
    summaries: list[dict[str, Any]] = [x for x in given if isinstance(x, dict)]
    if len(summaries) != len(given):
        return None
    out: dict[str, Any] = {k: sum(int(x.get(k, 0)) for x in summaries) for k in SUMMED}
    kinds: dict[str, int] = {}
    for x in summaries:
        for kind, n in x.get("refused_by_kind", {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(n)
    out["refused_by_kind"] = dict(sorted(kinds.items()))
    out["files"] = max(int(x.get("files", 0)) for x in summaries)
    out["files_not_imported"] = max(int(x.get("files_not_imported", 0)) for x in summaries)
    return {k: out[k] for k in summaries[0]} if set(summaries[0]) <= set(out) else out


def mark_positions(doc: dict[str, Any], positions: list[tuple[int, ...]]) -> dict[str, Any]:
    """A shard's JSON document with each launch's declared index (`"index"`), which `merge` orders by."""
    for f, where in zip(doc["files"], positions):
        if len(where) == len(f["launches"]):
            for launch, i in zip(f["launches"], where):
                launch["index"] = i
    return doc


def merge_sarif(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One SARIF document holding every shard's run (each keeps its category)."""
    if not docs:
        raise MergeError("no documents to merge")
    out = {k: v for k, v in docs[0].items() if k != "runs"}
    out["runs"] = [run for doc in docs for run in doc.get("runs", [])]
    return out
