"""Every server setting can be set from VS Code: package.json contributes a `tilelens.*` setting for
each field of tilelens_lsp.settings.Settings, under a name the server maps onto that field, and the
extension's settings record (launch.ts) forwards it."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

from tilelens_lsp import settings

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


def contributed() -> dict[str, dict]:
    package = json.loads((EXTENSION / "package.json").read_text())
    return package["contributes"]["configuration"]["properties"]


def test_every_server_setting_has_a_vscode_setting():
    names = {key.removeprefix("tilelens.") for key in contributed()}
    mapped = {settings._CAMEL.get(name, name) for name in names}
    # target_pinned is the CLI's own (its --target beats every toml), never a user's setting
    missing = [f.name for f in fields(settings.Settings) if f.name not in mapped and f.name != "target_pinned"]
    assert missing == []


def test_every_vscode_setting_but_the_trace_reaches_the_server():
    launch = (EXTENSION / "src" / "launch.ts").read_text()
    record = re.search(r"export interface ServerSettings \{(.*?)\}", launch, re.S).group(1)
    forwarded = set(re.findall(r"^\s+(\w+):", record, re.M))
    names = {key.removeprefix("tilelens.") for key in contributed() if not key.startswith("tilelens.trace.")}
    assert names == forwarded
    assert all(settings._CAMEL.get(n, n) in {f.name for f in fields(settings.Settings)} for n in forwarded)


def test_setting_defaults_match_the_server_defaults():
    props, defaults = contributed(), settings.Settings()
    for key, prop in props.items():
        field = settings._CAMEL.get(key.removeprefix("tilelens."))
        if field is None or field == "interpreter":
            continue       # the interpreter default is "whatever python runs the server"
        value = getattr(defaults, field)
        assert prop["default"] == (list(value) if isinstance(value, tuple) else value), key
