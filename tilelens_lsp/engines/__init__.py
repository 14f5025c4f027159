"""Engines stage: a launch model (TTIR module, argument values, grid, budget) → what each access site touched.

In: `values.LaunchModel`. Out: an engine whose `sites` (`values.SiteResult`), `width_obligations()`,
`truncated` and `unreachable` the clients read. `select.analyze` picks the engine: the affine summary
(`affine/`) when the launch stays in its fragment, else the enumeration (`enumerate/`). Both share the
value model of `values`; neither imports the other's private names.
"""
