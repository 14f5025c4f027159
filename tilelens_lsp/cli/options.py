"""Options the subcommands share: the worker's interpreter, target and timeout, read into Settings."""

from __future__ import annotations

import os

from tilelens_lsp.settings import Settings, check_target, from_environment, merge


def interpreter_arg(text: str) -> str:
    """`--python`: a path with a folder in it is the user's, relative to where they ran us (the worker
    starts in a folder of its own); a bare name (`python3`) is looked up on PATH as it is."""
    return os.path.abspath(os.path.expanduser(text)) if os.sep in text or text.startswith("~") else text


def settings_from_args(args) -> Settings:
    """The environment's settings with `--target`, `--timeout` and `--python` over them (ValueError
    on a bad value)."""
    settings = from_environment(Settings())
    if getattr(args, "target", None):
        settings = merge(settings, {"target": check_target(args.target)})
    if getattr(args, "timeout", None) is not None:
        settings = merge(settings, {"timeout": args.timeout})
    if getattr(args, "python", None):
        settings = merge(settings, {"interpreter": interpreter_arg(args.python)})
    return settings
