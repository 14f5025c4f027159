"""pytest plugin loaded by `mutate.py` (`-p mutation_probe`): records where `tilelens_lsp` was imported from.

At the end of the session it writes {module name: file} for every loaded `tilelens_lsp` module to
`$TILELENS_MUTATION_PROBE`, so the mutation driver can prove that the mutated copy, not the editable
install, was under test. Does nothing when that variable is unset.
"""

from __future__ import annotations

import json
import os
import sys


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("TILELENS_MUTATION_PROBE")
    if not path:
        return
    modules = {
        name: getattr(module, "__file__", None)
        for name, module in list(sys.modules.items())
        if name == "tilelens_lsp" or name.startswith("tilelens_lsp.")
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(modules, f)
