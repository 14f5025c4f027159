"""TTIR stage: the printed module of one compiled launch → a tree of ops with typed attributes.

In: TTIR text (and the MLIR bindings' module, for the alignment check). Out: `reader.Module` (functions,
blocks with their successors, ops whose attributes are parsed once in `attrs`), the control-flow order
of multi-block bodies (`cfg`) and source locations (`locs`). Nothing here knows about values or engines.
"""
