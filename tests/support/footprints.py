"""The product's footprints against the oracle's (tests/support/oracle.py), access by access.

Accesses are keyed by (op, file name, line, pointer) and their elements kept as merged half-open
intervals; `compare` lists every element one side has and the other lacks (an inexact product access
only has to cover the interpreter's). It compares one run with one launch x config: which runs and
launches to pair, and what else a test demands of a launch, are the calling test's.
"""

from __future__ import annotations

from pathlib import Path


def merge(intervals) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted((int(s), int(e)) for s, e in intervals if e > s):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def difference(a, b) -> list[tuple[int, int]]:
    """Elements of merged intervals `a` that are not in merged intervals `b`."""
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def count(intervals) -> int:
    return sum(e - s for s, e in intervals)


def _show(intervals, limit: int = 4) -> str:
    shown = ", ".join(f"[{s}, {e})" for s, e in intervals[:limit])
    more = f", ... ({len(intervals)} intervals)" if len(intervals) > limit else ""
    return f"{count(intervals)} elements: {shown}{more}"


def _key(op: str, path: str, line: int, pointer: str) -> tuple:
    return (op, Path(path).name, int(line), pointer)


def oracle_accesses(run: dict) -> dict[tuple, list[tuple[int, int]]]:
    out: dict[tuple, list] = {}
    for a in run["accesses"]:
        key = _key(a["op"], a["path"], a["line"], a["pointer"])
        out[key] = merge(out.get(key, []) + [tuple(iv) for iv in a["elements"]])
    return out


def _product_accesses(launch) -> dict[tuple, tuple[bool, list[tuple[int, int]]]]:
    out: dict[tuple, tuple[bool, list]] = {}
    for a in launch.accesses:
        key = _key(a.op, a.path, a.line, a.pointer)
        exact, elems = out.get(key, (True, []))
        out[key] = (exact and a.exact, merge(elems + [tuple(iv) for iv in a.elements]))
    return {k: v for k, v in out.items() if v[1]}  # an access no lane ever performs is no access


def _fmt_key(key: tuple) -> str:
    op, name, line, pointer = key
    return f"{op} {name}:{line} {pointer}"


def compare(oracle_run: dict, launch) -> list[str]:
    """Problems between one oracle run and the product's record of the same launch x config."""
    want = oracle_accesses(oracle_run)
    got = _product_accesses(launch)
    problems = []
    for key in sorted(set(want) | set(got), key=str):
        if key not in got:
            problems.append(
                f"{_fmt_key(key)}: the interpreter touches {_show(want[key])}; the product reports no such access"
            )
            continue
        exact, elems = got[key]
        if key not in want:
            if exact:
                problems.append(f"{_fmt_key(key)}: the product reports {_show(elems)}; the interpreter never performs it")
            continue
        missing = difference(want[key], elems)
        extra = difference(elems, want[key]) if exact else []
        if missing or extra:
            what = "exact" if exact else "inexact (must cover)"
            detail = []
            if missing:
                detail.append(f"missed {_show(missing)}")
            if extra:
                detail.append(f"spurious {_show(extra)}")
            problems.append(f"{_fmt_key(key)} [{what}]: " + "; ".join(detail))
    return problems


def config_matches(oracle_config: dict, product_config: dict) -> bool:
    # The product's config holds every constexpr of the launch; the oracle's only the autotune kwargs.
    return all(k in product_config and product_config[k] == v for k, v in oracle_config.items())
