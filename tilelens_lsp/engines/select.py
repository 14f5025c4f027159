"""Engine choice: the affine summary when the launch stays in its fragment, else the enumeration.

In: `values.LaunchModel`. Out: the engine that answered (`AffineGraph` or `AccessGraph`). Also the
test mode `TILELENS_ENGINE=compare`, which runs both engines on every summarized launch and insists
they agree, and `ENGINES`, a count of launches answered per engine in this process.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from typing import Any

from tilelens_lsp.engines.affine import AffineGraph, NotAffine
from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.values import LaunchModel

WITNESS_SHARE = 8                # an out-of-bounds launch is enumerated when it fits budget / this
ENGINE_ENV = "TILELENS_ENGINE"   # auto (default) | enumerate | compare (tests: both engines, must agree)
ENGINES: Counter[str] = Counter()  # launches answered per engine in this process (tests and benchmarks)


def engine_mode() -> str:
    return os.environ.get(ENGINE_ENV, "auto")


def analyze(model: LaunchModel) -> Any:
    """The launch's summary when it stays in the affine fragment, else its enumeration.

    An out-of-bounds launch is enumerated when that fits a share of the budget, so its witness is
    the one enumeration reports at any size that fits; past that, the summary keeps its exact
    footprint and takes each witness from enumerating the one program found to show it."""
    mode = engine_mode()
    if mode != "enumerate":
        summary = AffineGraph(model)
        try:
            summary.run()
            if summary.pending:
                trial = AccessGraph(dataclasses.replace(model, budget=max(1, model.budget // WITNESS_SHARE)))
                trial.run()
                if trial.truncated is None:
                    ENGINES["enumeration"] += 1
                    return trial
                summary.fill_witnesses()
        except (NotAffine, OverflowError):   # OverflowError: a coefficient past int64
            pass
        except Exception:   # a bug of the summary must not cost the launch its verdict: enumerate
            if mode == "compare":
                raise       # ... but tests must see it
            ENGINES["summary-failed"] += 1
        else:
            if mode == "compare":
                compare(summary, model)
            ENGINES["summary"] += 1
            return summary
    graph = AccessGraph(model)
    graph.run()
    ENGINES["enumeration"] += 1
    return graph


def site_footprints(sites: dict) -> dict:
    """What an engine found at each site, in a form two engines can be compared by (witnesses aside:
    the summary's may come from another program)."""
    out = {}
    for key, site in sites.items():
        s, e = site.intervals()
        out[key] = (site.op, site.loc, s.tolist(), e.tolist(), site.exact, site.oob is not None,
                    site.refusal is not None)
    return out


def compare(summary: AffineGraph, model: LaunchModel) -> None:
    """Enumerate a summarized launch too and insist on the same sites and footprints (a test mode:
    each engine checks the other on every launch the summary answers)."""
    graph = AccessGraph(model)
    graph.run()
    if graph.truncated is not None:
        return

    a, b = site_footprints(summary.sites), site_footprints(graph.sites)
    if a != b:
        diff = [(a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)]
        raise AssertionError(f"the affine summary and the enumeration disagree: {str(diff[0])[:600]}")
    if any(ob.violation is not None for ob in graph.width_obligations()):
        raise AssertionError("the enumeration finds an overflow the affine summary did not")
