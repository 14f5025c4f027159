"""The analysis pipeline for one file, run inside a worker (being split into modules; see launch.py)."""

from tilelens_lsp.pipeline.launch import *  # noqa: F401,F403
from tilelens_lsp.pipeline.launch import _ENGINE, _is_user_module  # noqa: F401
