"""The real-world corpus (issue 15): Triton kernels of pinned PyPI packages, installed in `.venv-corpus`
by `tools/corpus_env.sh` (never copied here), swept by the product itself.

    bash tools/corpus_env.sh                                  # the corpus venv (once)
    .venv-corpus/bin/python tools/corpus.py synth             # discover kernels, write tests/corpus/synth/*.toml
    .venv/bin/python tools/corpus.py sweep [--subset] [--jobs 2]   # check every launch, print the table
    .venv/bin/python tools/corpus.py suggest [--subset]       # TL100's fix on every kernel, then checked

`synth` imports each package's kernel modules, finds every kernel (through any wrapper: autotuners,
heuristics, FlagGems' LibEntry) and writes, per package, a toml of `module =` launch tables: one
synthesized launch per kernel, verified by compiling it (tilelens_lsp/compile/synth.py), and a manifest of
what was discovered. Hand-written launches for kernels whose shapes matter are in tests/corpus/hand.toml.
`sweep` runs `tilelens-lsp check --config ... --python .venv-corpus/bin/python --format json` on those
tomls and prints a table by package and outcome, and last the corpus line. FlagGems imports on a host
without a GPU only with GEMS_VENDOR=nvidia FLAGGEMS_DB_URL=sqlite:// in the environment: set here.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
SYNTH = CORPUS / "synth"
MANIFEST = SYNTH / "manifest.json"
HAND = CORPUS / "hand.toml"
VENV = Path(os.environ.get("TILELENS_CORPUS_VENV", REPO / ".venv-corpus"))
ENV = {"GEMS_VENDOR": "nvidia", "FLAGGEMS_DB_URL": "sqlite://", "TILELENS_CACHE_DIR": "off"}


@dataclass(frozen=True)
class Package:
    dist: str  # the PyPI name and pinned version (tools/corpus_env.sh installs it)
    version: str
    roots: tuple[str, ...]  # the packages whose modules hold its kernels
    exclude: tuple[str, ...] = ()  # module name patterns of other hardware or DSLs


PACKAGES = {
    "liger-kernel": Package(
        "liger-kernel", "0.8.5", ("liger_kernel.ops",), (r"\._ascend", r"cutedsl", r"cutile", r"\.cute\b")
    ),
    "flag-gems": Package(
        "flag-gems",
        "5.0.2",
        ("flag_gems.ops", "flag_gems.fused", "flag_gems.runtime.backend._nvidia"),
        (r"\.(hopper|blackwell)\b",),
    ),
    "fla-core": Package(
        "fla-core", "0.6.0", ("fla.ops", "fla.modules"), (r"triton_ascend", r"tilelang", r"\.backends\.(npu|ascend)")
    ),
}

# The fixed, representative subset the CI test sweeps (tests/corpus/test_corpus.py): modules of each
# package with plain kernels, autotuned ones, heuristics, LibEntry wrappers and a known compile error.
SUBSET = {
    "liger-kernel": (
        "liger_kernel.ops.softmax",
        "liger_kernel.ops.rms_norm",
        "liger_kernel.ops.cross_entropy",
        "liger_kernel.ops.swiglu",
    ),
    "flag-gems": ("flag_gems.ops.mm", "flag_gems.ops.softmax", "flag_gems.ops.layernorm", "flag_gems.ops.argmax"),
    "fla-core": ("fla.ops.utils.cumsum", "fla.ops.common.chunk_h", "fla.modules.norm.layernorm"),
}


PREFIX = {"liger-kernel": "liger_kernel", "flag-gems": "flag_gems", "fla-core": "fla"}  # each package's import name


def toml_path(dist: str) -> Path:
    return SYNTH / f"{dist}.toml"


# ---------------------------------------------------------------- discovery (in the corpus venv)


def _modules(pkg: Package) -> list[str]:
    names: list[str] = []
    for root in pkg.roots:
        try:
            mod = importlib.import_module(root)
        except Exception:  # noqa: BLE001 - a root that does not import has no kernels here
            continue
        names.append(root)
        for info in pkgutil.walk_packages(getattr(mod, "__path__", []), root + ".", onerror=lambda n: None):
            if not any(re.search(p, info.name) for p in pkg.exclude):
                names.append(info.name)
    return sorted(set(names))


def _launched_and_called(files: list[Path]) -> tuple[set[str], set[str]]:
    """Names launched somewhere (`name[grid](...)`) and names called inside @jit functions."""
    import ast

    from tilelens_lsp.launches.kernels import is_jit

    launched: set[str] = set()
    called: set[str] = set()
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
                v = n.func.value
                launched.add(v.attr if isinstance(v, ast.Attribute) else getattr(v, "id", ""))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(n):
                for c in ast.walk(n):  # called, or passed on (a combine_fn of tl.reduce / associative_scan)
                    if isinstance(c, ast.Call) and not isinstance(c.func, ast.Subscript):
                        f_ = c.func
                        called.add(f_.attr if isinstance(f_, ast.Attribute) else getattr(f_, "id", ""))
                    elif isinstance(c, ast.Name) and isinstance(c.ctx, ast.Load):
                        called.add(c.id)
    return launched, called


def discover(pkg: Package) -> tuple[dict[str, list[str]], dict[str, str], int, int]:
    """{module: [kernel attribute names]}, {module: import error}, helpers skipped, Gluon kernels skipped.

    A kernel is a module attribute whose `.fn` chain ends in a JITFunction defined in that module,
    counted once however many names or wrappers lead to it. A @jit function that other @jit
    functions call and that nothing launches is a helper (it takes values, not pointers): skipped."""
    from triton.runtime.jit import JITFunction

    from tilelens_lsp.compile.binding import LaunchBindingError, unwrap

    kernels: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    modules = _modules(pkg)
    files = []
    loaded = {}
    for name in modules:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loaded[name] = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - the package's own import errors
            failed[name] = re.sub(r"\(/\S*/site-packages/", "(", f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        if getattr(loaded[name], "__file__", None):
            files.append(Path(loaded[name].__file__))
    launched, called = _launched_and_called(files)
    helpers = gluon = 0
    for name, mod in loaded.items():
        seen: set[int] = set()
        for attr, obj in sorted(vars(mod).items()):
            if not (isinstance(obj, JITFunction) or hasattr(obj, "fn")):
                continue
            try:
                chain = unwrap(obj)
            except LaunchBindingError:
                continue
            except Exception:  # noqa: BLE001 - an odd object's attributes
                continue
            jit = chain.jit
            if getattr(jit, "__module__", None) != name or id(jit) in seen:
                continue
            if type(jit).__module__.startswith("triton.experimental"):
                gluon += 1  # a Gluon kernel (@gluon.jit): another language than Triton's tl, not ours
                continue
            seen.add(id(jit))
            plain = not chain.layers and obj is jit
            if (
                plain
                and (jit.__name__ in called or attr in called)
                and jit.__name__ not in launched
                and attr not in launched
            ):
                helpers += 1
                continue
            kernels.setdefault(name, []).append(attr)
    return kernels, failed, helpers, gluon


def synth(args) -> int:
    import triton

    from tilelens_lsp.compile import synth as synthesis

    SYNTH.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    for dist, pkg in PACKAGES.items():
        if args.package and dist not in args.package:
            continue
        start = time.time()
        kernels, failed, helpers, gluon = discover(pkg)
        lines = [
            f"# {dist}=={pkg.version}: synthesized launches, one per kernel, each verified by compiling it",
            "# (tools/corpus.py synth writes this file; do not edit: hand-written launches go in ../hand.toml)",
            f"# Triton {triton.__version__}; shapes are arbitrary: these launches check that every kernel",
            "# compiles and that the analysis reaches every access, not that a real launch is in bounds.",
            "",
        ]
        unsynthesized: dict[str, str] = {}
        count = 0
        for module, names in sorted(kernels.items()):
            print(f"synth: {dist}: {module} ({len(names)} kernels)", file=sys.stderr, flush=True)
            mod = importlib.import_module(module)
            compiles = synthesis.compile_check(mod)
            for attr in names:
                count += 1
                found = synthesis.synthesize(getattr(mod, attr), attr, compiles)
                if found.launch is None:
                    unsynthesized[f"{module}.{attr}"] = found.error[:300]
                    continue
                note = [f"# every candidate fails alike: {found.error[:150]}"] if found.fails_alike else []
                lines += ["[[launch]]"] + note + [f'module = "{module}"', f"launch = {json.dumps(found.launch)}", ""]
        toml_path(dist).write_text("\n".join(lines))
        manifest[dist] = {
            "version": pkg.version,
            "triton": triton.__version__,
            "kernels": count,
            "helpers_skipped": helpers,
            "gluon_skipped": gluon,
            "modules": {m: n for m, n in sorted(kernels.items())},
            "import_failures": failed,
            "unsynthesized": unsynthesized,
        }
        MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(
            f"synth: {dist}: {count} kernels in {len(kernels)} modules, {len(unsynthesized)} without a "
            f"compiling launch, {helpers} helpers and {gluon} Gluon kernels skipped, {len(failed)} modules do not import "
            f"({time.time() - start:.0f} s)",
            flush=True,
        )
    return 0


# ---------------------------------------------------------------- the sweep (any Python)


def _subset_toml(dist: str, out: Path) -> Path:
    """The synthesized tables of the CI subset's modules, plus the hand-written ones of those modules."""
    keep = set(SUBSET[dist])
    text = toml_path(dist).read_text()
    blocks = text.split("[[launch]]")
    kept = [b for b in blocks[1:] if re.search(r'module = "([^"]+)"', b).group(1) in keep]
    out.write_text(blocks[0] + "".join("[[launch]]" + b for b in kept))
    return out


def _hand_for(dist: str, modules: set[str] | None, out: Path) -> Path | None:
    if not HAND.exists():
        return None
    prefix = PREFIX[dist]
    blocks = HAND.read_text().split("[[launch]]")
    kept = []
    for b in blocks[1:]:
        m = re.search(r'module = "([^"]+)"', b)
        if m and m.group(1).split(".")[0] == prefix and (modules is None or m.group(1) in modules):
            kept.append("[[launch]]" + b)
    if not kept:
        return None
    out.write_text("".join(kept))
    return out


def _check(config: Path, jobs: int, timeout: float) -> dict:
    python = VENV / "bin" / "python"
    env = {**os.environ, **ENV}
    cmd = [
        str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable,
        "-m",
        "tilelens_lsp",
        "check",
        "--config",
        str(config),
        "--python",
        str(python),
        "--format",
        "json",
        "--jobs",
        str(jobs),
        "--timeout",
        str(timeout),
        "--root",
        str(CORPUS),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"check exited {proc.returncode}: {proc.stderr[-2000:]}")
    doc = json.loads(proc.stdout)
    # an installed file prints by its importable path; its absolute path says where it came from
    where = [f.get("absolute_path") or f["path"] for f in doc["files"]]
    strays = [w for w in where if "site-packages" not in w and "/" in w]
    if strays:  # a `module =` that did not resolve would leave check to sweep the working folder
        raise RuntimeError(f"check of {config} reported files outside the corpus venv: {strays[:5]}")
    return doc


# What each outcome means: a real property of the kernel, or a named gap of ours.
EXPLAIN = {
    "analyzed": "every access of every program examined (verdicts, if any, are in the JSON)",
    "refused:indirect-address": "named gap (by design): an address built from loaded data (gathers, labels, "
    "block tables, varlen offsets); value ranges of index tensors would bound it",
    "refused:data-dependent-bound": "named gap (by design): a loop bound or mask read from memory (varlen "
    "sequences, CSR rows)",
    "refused:unvisited": "soundness guard: some memory op of the module was never examined",
    "refused:launch-too-large": "named gap: the enumeration budget (2^28 evaluations) ran out before the "
    "affine summary could answer; a smaller declared launch is checked",
    "refused:out-of-vocabulary": "named gap: an op the access model does not know feeds an address "
    "(e.g. arith.fptosi: a float converted to an index)",
    "refused:pointer-provenance": "named gap: an address selects between pointers of different arguments "
    "(tl.where over two tensors), so no single argument's bounds apply",
    "refused:reader-misalignment": "gap (a reader bug, reported): the TTIR reader could not align an op; "
    "refused rather than misread",
    "directive-error": "TL020: the launch does not fit the kernel (a synthesis gap of ours)",
    "crashed": "TL050: the worker crashed or timed out",
}
# Compile errors (TL010) by message: each a real Triton/kernel error, or a gap of our synthesis.
COMPILE_ERRORS = [
    (
        r"'dtype' object is not callable",
        "real: `tl.float32(x)` casts, which Triton 3.6-3.9 reject "
        "(liger-kernel 0.8.5 softmax multi-block: documented example)",
    ),
    (
        r"Block pointers have been removed",
        "real: the kernel uses tl.make_block_ptr, removed in Triton 3.9 (the package targets an older Triton)",
    ),
    (r"has no attribute 'cidv'", "real: a typo (`tl.cidv`) in the kernel, on a branch only some constexprs take"),
    (r"unsupported AST node type", "real: Python syntax Triton's code generator does not support"),
    (
        r"'tensor' object has no attribute 'load'",
        "gap (synthesis): a tensor-descriptor (TMA) parameter "
        "that synthesis did not recognise as one (declare it with descriptor(...))",
    ),
    (
        r"'NoneType' object has no attribute '(shard_id|distributed_barrier)'",
        "gap: the kernel needs a runtime object (a distributed context) that a launch declaration cannot provide",
    ),
    (r"Input shapes should have M >= 1, N >= 1 and K >= 8", "gap (synthesis): a tl.dot dimension we chose too small"),
    (r"static_assert", "gap (synthesis): constexprs we chose violate the kernel's own static_assert"),
    (r".", "unclassified: every synthesized candidate fails alike with this message (read it in the JSON)"),
]


def _kind(launch: dict) -> str:
    status = launch["status"]
    if status == "refused":
        for d in launch.get("diagnostics", []):
            if d["code"] == "TL030":
                m = re.match(r"not analyzed: ([\w-]+)", d["message"])
                return f"refused:{m.group(1) if m else 'other'}"
            if d["code"] == "TL050":
                return "crashed"
        return "refused:other"
    return status


def _compile_class(message: str) -> str:
    return next(why for pattern, why in COMPILE_ERRORS if re.search(pattern, message))


RANK = {"analyzed": 0, "compile-error": 7, "directive-error": 8, "crashed": 9}  # refusals rank 1


def sweep(args) -> int:
    if not (VENV / "bin" / "python").exists():
        print(f"corpus: {VENV} is missing: run `bash tools/corpus_env.sh` first", file=sys.stderr)
        return 2
    manifest = json.loads(MANIFEST.read_text())
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tilelens-corpus-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    totals = collections.Counter()
    table: list[tuple[str, collections.Counter, dict]] = []
    examples: dict[str, str] = {}
    compile_errors: collections.Counter = collections.Counter()
    compile_examples: dict[str, str] = {}
    compile_messages: dict[str, str] = {}
    per_kernel_report: dict[str, dict[str, str]] = {}
    # One `check` over every table of every package (synthesized and hand-written): the workers share
    # the whole corpus, so its start, each package's import and its slowest launches overlap instead
    # of being paid once per package and file, one after another.
    chosen = [d for d in PACKAGES if (not args.package or d in args.package) and d in manifest]
    modules_of = {d: set(SUBSET[d]) if args.subset else None for d in chosen}
    tables: list[str] = []
    for dist in chosen:
        configs = [_subset_toml(dist, tmp / f"{dist}.toml") if args.subset else toml_path(dist)]
        hand = _hand_for(dist, modules_of[dist], tmp / f"{dist}.hand.toml")
        configs += [hand] if hand else []
        tables += ["[[launch]]" + b for config in configs for b in config.read_text().split("[[launch]]")[1:]]
    combined = tmp / "corpus.toml"
    combined.write_text("".join(t if t.endswith("\n") else t + "\n" for t in tables))
    start = time.time()
    doc = _check(combined, args.jobs, args.timeout)
    seconds = round(time.time() - start)
    # check reports files in the order the config names them (bare file names: not unique)
    order = list(dict.fromkeys(re.findall(r'^module = "([^"]+)"', combined.read_text(), re.M)))
    by_module = dict(zip(order, doc["files"]))
    for dist in chosen:
        info = manifest[dist]
        modules = modules_of[dist]
        prefix = PREFIX[dist]
        counts = collections.Counter()
        kernel_best: dict[str, str] = {}
        for module, f in by_module.items():
            if module.split(".")[0] != prefix:
                continue
            for d in f.get("diagnostics", []):
                if d["code"] == "TL050":
                    counts["crashed"] += 1
                    examples.setdefault("crashed", f"{module}: {d['message'][:160]}")
                elif d["code"] in ("TL010", "TL020"):
                    counts["file-" + d["code"]] += 1
                    examples.setdefault("file-" + d["code"], f"{module}: {d['message'][:200]}")
            for launch in f["launches"]:
                kind = _kind(launch)
                counts[kind] += 1
                counts["launches"] += 1
                diags = launch.get("diagnostics", [])
                if any(d["message"].startswith("not analyzed: unvisited") for d in diags):
                    counts["unvisited"] += 1
                key = f"{module}.{launch['kernel']}"
                if kind == "compile-error":
                    msg = next((d["message"] for d in diags if d["code"] == "TL010"), "")
                    why = _compile_class(msg)
                    compile_errors[why] += 1
                    compile_examples.setdefault(why, f"{key}: {msg[:160]}")
                    compile_messages[key] = msg[:300]
                elif kind != "analyzed":
                    msg = next((d["message"] for d in diags), "")
                    examples.setdefault(kind, f"{key}: {msg[:200]}")
                old = kernel_best.get(key)
                if old is None or RANK.get(kind, 1) < RANK.get(old, 1):
                    kernel_best[key] = kind
        kernels = info["kernels"] if not args.subset else sum(len(v) for m, v in info["modules"].items() if m in modules)
        unsynth = {k: v for k, v in info["unsynthesized"].items() if not args.subset or k.rsplit(".", 1)[0] in modules}
        counts["kernels"] = kernels
        counts["k-no-launch"] = len(unsynth)
        outcomes = collections.Counter(kernel_best.values())
        counts["k-analyzed"] = outcomes["analyzed"]
        counts["k-refused"] = sum(v for k, v in outcomes.items() if k.startswith("refused:"))
        counts["k-compile-error"] = outcomes["compile-error"]
        counts["k-compile-real"] = sum(
            1
            for k, v in kernel_best.items()
            if v == "compile-error" and _compile_class(compile_messages.get(k, "")).startswith("real:")
        )
        counts["k-ours"] = outcomes["directive-error"] + outcomes["crashed"]
        per_kernel_report[dist] = kernel_best
        table.append((dist, counts, unsynth))
        totals.update(counts)
        print(f"corpus: {dist}: {kernels} kernels, {counts['launches']} launches", file=sys.stderr, flush=True)
    print(f"corpus: one check of {totals['launches']} launches with --jobs {args.jobs} took {seconds} s", file=sys.stderr)
    totals["seconds"] = seconds
    _print_table(table, examples, compile_errors, compile_examples)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "totals": totals,
                    "packages": {d: c for d, c, _ in table},
                    "kernels": per_kernel_report,
                    "examples": examples,
                    "compile_errors": compile_errors,
                    "compile_messages": compile_messages,
                },
                indent=1,
                sort_keys=True,
            )
        )
    refused = sum(v for k, v in totals.items() if k.startswith("refused:"))
    print(
        f"corpus: {len(table)} packages, {totals['kernels']} kernels, {totals['launches']} launches, "
        f"{totals['analyzed']} analyzed, {refused} refused, {totals['compile-error']} compile-errors, "
        f"{totals['crashed']} crashed, {totals['unvisited']} unvisited"
    )
    return 0


def _print_table(table, examples: dict[str, str], compile_errors, compile_examples) -> None:
    print("Kernels, by the best outcome among their launches (configs):\n")
    print(
        "| package | kernels | analysed | refused | compile error (TL010): real / other | TL020/TL050 (ours) | "
        "no launch synthesized | analysed or refused | + real compile errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rows = list(table) + ([("all", sum((c for _, c, _ in table), collections.Counter()), {})] if len(table) > 1 else [])
    for dist, c, _ in rows:
        name = f"{dist}=={PACKAGES[dist].version}" if dist in PACKAGES else "**all**"
        reached = c["k-analyzed"] + c["k-refused"]
        honest = reached + c["k-compile-real"]
        print(
            f"| {name} | {c['kernels']} | {c['k-analyzed']} | {c['k-refused']} | {c['k-compile-real']} / "
            f"{c['k-compile-error'] - c['k-compile-real']} | {c['k-ours']} | {c['k-no-launch']} | "
            f"{reached} ({100 * reached / max(1, c['kernels']):.1f}%) | "
            f"{honest} ({100 * honest / max(1, c['kernels']):.1f}%) |"
        )
    kinds = sorted(
        {k for _, c, _ in table for k in c if k.startswith("refused:")}
        | {"analyzed", "compile-error", "directive-error", "crashed"}
    )
    print("\nLaunches (one per autotune config that compiles to a distinct specialization), by outcome:\n")
    print("| package | launches | " + " | ".join(kinds) + " |")
    print("|---" * (2 + len(kinds)) + "|")
    for dist, c, _ in rows:
        name = f"{dist}=={PACKAGES[dist].version}" if dist in PACKAGES else "**all**"
        print(f"| {name} | {c['launches']} | " + " | ".join(str(c.get(k, 0)) for k in kinds) + " |")
    print("\nWhat each outcome is:\n")
    for k in kinds:
        if k in EXPLAIN:
            print(f"- `{k}`: {EXPLAIN[k]}" + (f"; e.g. `{examples[k]}`" if k in examples else ""))
    if compile_errors:
        print("\nCompile errors (TL010 launches) by cause:\n")
        for why, n in compile_errors.most_common():
            print(f"- {n}: {why}; e.g. `{compile_examples[why]}`")
    print("\nKernels with no compiling synthesized launch, by the first candidate's error:\n")
    for dist, _, unsynth in table:
        reasons = collections.Counter(re.sub(r"\d+", "N", v)[:90] for v in unsynth.values())
        if reasons:
            print(f"- {dist} ({len(unsynth)}): " + "; ".join(f"{r} ({n})" for r, n in reasons.most_common(6)))
    print()


# ---------------------------------------------------------------- conformance (corpus venv, TRITON_INTERPRET=1)


def _merge(intervals: list[list[int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(tuple(iv) for iv in intervals):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def conform(args) -> int:
    """The footprints of the hand-written corpus launches against what Triton's interpreter touches,
    access by access and config by config (tests/support/oracle.py), where the interpreter can run
    the launch at all: it cannot import FlagGems (LibEntry wants a JITFunction), call `tl.float32(x)`
    or `.to()` on a float scalar."""
    os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(REPO))
    from tests.support import oracle  # noqa: E402 - the interpreter oracle of the conformance suite
    from tilelens_lsp.launches.toml import launches_by_table

    config_file = args.config or HAND
    ours = _check(config_file, args.jobs, args.timeout)
    order = list(dict.fromkeys(re.findall(r'^module = "([^"]+)"', config_file.read_text(), re.M)))
    by_module = dict(zip(order, ours["files"]))
    counts = collections.Counter()
    for data, out in launches_by_table(config_file, "config"):
        launch, module = out.launches[0], data["module"]
        mine = [x for x in by_module[module]["launches"] if x["kernel"] == launch.kernel and x["line"] == launch.line]
        try:
            kernel = getattr(importlib.import_module(module), launch.kernel)
            while not hasattr(kernel, "run") or type(kernel).__name__ == "LibEntry":
                kernel = kernel.fn
            configs = oracle.kernel_configs(kernel)
        except Exception as exc:  # noqa: BLE001 - the interpreter cannot even import it
            counts["interpreter cannot run"] += len(mine)
            print(f"conform: {module}.{launch.kernel}: interpreter cannot import: {type(exc).__name__}: {exc}"[:200])
            continue
        for config in configs:
            result = next((r for r in mine if all(r["config"].get(k) == v for k, v in config.items())), None)
            if result is None:
                counts["not compared (no such config in our results)"] += 1
                continue
            try:
                run = oracle.run_launch(kernel, launch, config)
            except Exception as exc:  # noqa: BLE001 - a limit of the oracle, not of the product
                counts["interpreter cannot run"] += 1
                print(f"conform: {module}.{launch.kernel} {config}: interpreter: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            if result["status"] != "analyzed":
                counts[f"not compared ({result['status']})"] += 1
                continue
            theirs = {(op, line, ptr): _merge(oracle.to_intervals(e)) for (op, _p, line, ptr), e in run.accesses.items()}
            mine_acc: dict = {}
            for a in result["accesses"]:
                key = (a["op"], a["line"], a["pointer"])
                mine_acc[key] = (a["exact"], _merge(mine_acc.get(key, (True, []))[1] + a["elements"]))
            # an access the interpreter never made touches nothing: the same as an empty footprint
            same = all(
                mine_acc.get(k, (True, []))[1] == theirs.get(k, [])
                if mine_acc.get(k, (True, []))[0]
                else all(any(lo <= a and b <= hi for lo, hi in mine_acc[k][1]) for a, b in theirs.get(k, []))
                for k in set(theirs) | set(mine_acc)
            )
            if not same:
                for k in sorted(set(theirs) | set(mine_acc), key=str):
                    a, b = theirs.get(k), mine_acc.get(k)
                    if (b or (True, []))[0] and (b or (True, []))[1] != (a or []) or b is None and a:
                        only_a = sorted(set(a or []) - set((b or (True, []))[1]))[:6]
                        only_b = sorted(set((b or (True, []))[1]) - set(a or []))[:6]
                        print(f"conform:   {k}: only the interpreter's {only_a}, only ours {only_b}")
            counts["conforming" if same else "differing"] += 1
            counts["compared"] += 1
            print(
                f"conform: {module}.{launch.kernel} {config}: {'conforming' if same else 'DIFFERS'} "
                f"({len(theirs)} accesses, {run.seconds:.1f} s in the interpreter)"
            )
    print("conform: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 1 if counts["differing"] else 0


def suggest_sweep(args) -> int:
    """TL100's fix on code we did not write: a suggestion (tilelens_lsp/suggest.py) for every corpus
    kernel, through the worker in the corpus venv; then every suggestion checked as a launch table."""
    from tilelens_lsp.settings import Settings
    from tilelens_lsp.worker.process import Worker

    manifest = json.loads(MANIFEST.read_text())
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tilelens-suggest-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    worker = Worker(Settings(interpreter=str(VENV / "bin" / "python"), timeout=args.timeout))
    totals: collections.Counter = collections.Counter()
    try:
        for dist in PACKAGES:
            if args.package and dist not in args.package:
                continue
            modules = manifest[dist]["modules"]
            if args.subset:
                modules = {m: k for m, k in modules.items() if m in SUBSET[dist]}
            if args.module:
                modules = {m: k for m, k in modules.items() if m in args.module}
                if not modules:
                    continue
            origins = _origins(list(modules))
            tables, counts, failures = [], collections.Counter(), collections.Counter()
            start = time.time()
            for module, kernels in sorted(modules.items()):
                if module not in origins:
                    counts["no-file"] += len(kernels)
                    continue
                for s in worker.suggest(origins[module], None, kernels):
                    counts["kernels"] += 1
                    if not s.lines:
                        counts["no-suggestion"] += 1
                        failures[re.sub(r"\(\d+ tried\)", "", s.error.split(": ", 1)[-1])[:90]] += 1
                        continue
                    directive = " ".join(x[len("# tilelens:") :].strip() for x in s.lines if x.startswith("# tilelens:"))
                    tables.append(f'[[launch]]\nmodule = "{module}"\nlaunch = {json.dumps(directive)}\n')
            config = tmp / f"{dist}.toml"
            config.write_text("\n".join(tables))
            doc = _check(config, args.jobs, args.timeout) if tables else {"files": []}
            for f in doc["files"]:
                for launch in f["launches"]:
                    kind = _kind(launch)
                    codes = sorted(
                        {
                            d["code"]
                            for d in launch.get("diagnostics", [])
                            if d.get("severity") == "error" and d["code"] not in ("TL030", "TL050")
                        }
                    )
                    counts["launches"] += 1
                    if kind == "analyzed":
                        kind = "analyzed-" + ("+".join(codes) if codes else "clean")
                    counts[kind] += 1
                    if codes or kind == "crashed":
                        first = next(
                            (d["message"] for d in launch.get("diagnostics", []) if d["code"] in codes or kind == "crashed"),
                            "",
                        )
                        print(f"suggest: {dist}:   {kind}: {f['path']}: {launch['kernel']}: {first[:200]}", flush=True)
            counts["seconds"] = round(time.time() - start)
            print(f"suggest: {dist}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
            for why, n in failures.most_common(6):
                print(f"suggest: {dist}:   no suggestion x{n}: {why}", flush=True)
            totals.update(counts)
    finally:
        worker.stop()
    print("suggest: all: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    return 0


def _origins(modules: list[str]) -> dict[str, str]:
    """The file each module would load from in the corpus venv (found, not imported: parents are)."""
    code = (
        "import importlib.util, json, sys\nout = {}\nfor m in sys.argv[1:]:\n    try:\n"
        "        spec = importlib.util.find_spec(m)\n        out[m] = spec.origin if spec else None\n"
        "    except Exception:\n        pass\nprint(json.dumps(out))"
    )
    proc = subprocess.run(
        [str(VENV / "bin" / "python"), "-c", code, *modules],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        cwd="/",
    )
    return {m: o for m, o in json.loads(proc.stdout.strip().splitlines()[-1]).items() if o}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("synth", help="discover kernels and write tests/corpus/synth/*.toml (corpus venv)")
    s.add_argument("--package", action="append")
    w = sub.add_parser("sweep", help="check every corpus launch and print the table and the corpus line")
    w.add_argument("--package", action="append")
    w.add_argument("--subset", action="store_true", help="only the fixed CI subset of modules")
    w.add_argument("--jobs", type=int, default=2)
    w.add_argument("--timeout", type=float, default=1800.0, help="seconds per module before its worker is replaced")
    w.add_argument("--json", help="also write the counts and per-kernel outcomes here")
    c = sub.add_parser("conform", help="hand-written launches against TRITON_INTERPRET=1 (corpus venv)")
    c.add_argument("--timeout", type=float, default=1800.0)
    c.add_argument("--config", type=Path, default=None, help="another toml of `module =` launches (default: hand.toml)")
    c.add_argument("--jobs", type=int, default=1)
    g = sub.add_parser("suggest", help="TL100's fix on every corpus kernel: suggest, then check the suggestions")
    g.add_argument("--package", action="append")
    g.add_argument("--subset", action="store_true", help="only the fixed CI subset of modules")
    g.add_argument("--module", action="append", help="only these modules (repeatable)")
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args(argv)
    for k, v in ENV.items():
        os.environ.setdefault(k, v)
    return {"synth": synth, "sweep": sweep, "conform": conform, "suggest": suggest_sweep}[args.command](args)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
