"""The grid engine: a whole launch evaluated once for all of its programs, in time and memory that do
not grow with the number of programs.

In: `values.LaunchModel`. Out: `GridGraph` with the results the other engines give (`sites`,
`width_obligations()`, `truncated`, `unreachable`) plus `notes`, or `NotGrid` when the launch leaves
its domain. `forms` holds the values, `handlers` the ops, `graph` the driver and the recording of
accesses, `relational` the bound an atom relating loaded scalars puts on an address (`o_t < eos - bos`
on `bos + o_t`), `witness` the concrete evaluation of candidate programs behind every definite verdict.
"""

from tilelens_lsp.engines.grid import handlers  # importing it registers the handlers
from tilelens_lsp.engines.grid.forms import NotGrid
from tilelens_lsp.engines.grid.graph import GridGraph, PerProgram

__all__ = ["GridGraph", "NotGrid", "PerProgram", "handlers"]
