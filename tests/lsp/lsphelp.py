"""Shared pieces of the end-to-end LSP tests: kernels, a workspace in tmp_path, and a client helper.

Every test talks to the real server (`python -m tilelens_lsp`) over stdio through pytest-lsp, with
the capabilities that VS Code or Neovim send.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]


def make_client() -> LanguageClient:
    """pytest-lsp's client, plus what a real editor answers: dynamic registration."""
    client = pytest_lsp.make_test_lsp_client()
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls: LanguageClient, params: types.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)

    client.lens_refreshes = 0
    client.applied_edits = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(ls: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        ls.applied_edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh_lenses(ls: LanguageClient, params: None) -> None:
        ls.lens_refreshes += 1

    return client


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "tilelens_lsp"],
    client_factory=make_client,
    # Without PYTHONDONTWRITEBYTECODE, like a user's shell: the server must keep the workspace clean itself.
    server_env={
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    },
)


def kernel(body: str) -> str:
    return textwrap.dedent(body).lstrip("\n")


ADD_BUGGY = kernel("""
    import triton
    import triton.language as tl

    # tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)
""")
UNMASKED_LINE = 9  # 0-based line of `x = tl.load(x_ptr + offs)`
assert ADD_BUGGY.splitlines()[UNMASKED_LINE].strip() == "x = tl.load(x_ptr + offs)"

ADD_FIXED = ADD_BUGGY.replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=mask)")

HUNG = kernel("""
    import time
    import triton
    import triton.language as tl

    time.sleep(100)

    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")

CLEAN = kernel("""
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


class Workspace:
    """A workspace folder on disk plus the document bookkeeping a client would do."""

    def __init__(self, root: Path, client: LanguageClient) -> None:
        self.root = root
        self.client = client
        self.versions: dict[str, int] = {}

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def write(self, name: str, text: str | bytes) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path.as_uri()

    def open(self, name: str, text: str | None = None) -> str:
        if text is not None:
            self.write(name, text)
        uri = self.uri(name)
        body = (self.root / name).read_bytes().decode("utf-8", errors="replace")
        self.versions[uri] = 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=body)
            )
        )
        return uri

    def save(self, name: str, text: str | None = None) -> str:
        """Write `text` (if given) as the editor would: a full change, then didSave."""
        uri = self.uri(name)
        if text is not None:
            self.write(name, text)
            self.versions[uri] = self.versions.get(uri, 1) + 1
            self.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return uri

    def edit(self, name: str, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
        """An unsaved edit as an editor sends it: one incremental change of the range start..end."""
        uri = self.uri(name)
        self.versions[uri] = self.versions.get(uri, 1) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=start[0], character=start[1]),
                            end=types.Position(line=end[0], character=end[1]),
                        ),
                        text=text,
                    )
                ],
            )
        )
        return uri

    def close(self, name: str) -> str:
        uri = self.uri(name)
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return uri

    async def message(self, match: Callable[[str], bool], timeout: float = 60.0) -> str:
        """The first window/showMessage text that `match` accepts (waiting for it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in self.client.messages:
                if match(m.message):
                    return m.message
            await asyncio.sleep(0.02)
        raise AssertionError(f"no such message within {timeout} s (have: {[m.message for m in self.client.messages]})")

    async def diagnostics(
        self, uri: str, timeout: float = 60.0, until: Callable[[list[types.Diagnostic]], bool] | None = None
    ) -> list[types.Diagnostic]:
        """The next diagnostics published for `uri` (after the last open/save/close of it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if uri in self.client.diagnostics:
                found = list(self.client.diagnostics[uri])
                if until is None or until(found):
                    return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"no diagnostics for {uri} within {timeout} s (have: {self.client.diagnostics.get(uri)})")

    async def hover(self, uri: str, line: int, character: int = 8) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
            )
        )

    async def stats(self) -> dict[str, Any]:
        return plain(await self.client.protocol.send_request_async("tilelens/stats", {}))


def client_fixture(
    name: str | None = None, editors: Sequence[str] = ("visual-studio-code", "neovim"), options: dict[str, Any] | None = None
):
    """The one client fixture of the LSP tests: a real server per module (and per editor snapshot, when
    more than one is given) in a workspace folder of its own, initialised with `options`.

    `client = client_fixture(...)` in a module overrides the default of tests/lsp/conftest.py; the
    folder is named after `name`, else after the module.
    """
    parametrized = {"params": list(editors)} if len(editors) > 1 else {}

    @pytest_lsp.fixture(config=SERVER, scope="module", **parametrized)
    async def client(lsp_client: LanguageClient, request, tmp_path_factory):
        editor = getattr(request, "param", editors[0])
        folder = name or request.module.__name__.rpartition(".")[2].removeprefix("test_")
        root = tmp_path_factory.mktemp(f"{folder}-{editor}" if parametrized else folder)
        lsp_client.ws = await start_session(lsp_client, root, editor, options)
        lsp_client.editor = editor
        yield
        await lsp_client.shutdown_session()

    return client


async def start_session(
    client: LanguageClient, root: Path, capabilities: str = "visual-studio-code", options: dict[str, Any] | None = None
) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tilelens.toml").touch()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities(capabilities),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options or {},
        )
    )
    return Workspace(root, client)


def plain(value: Any) -> Any:
    """pygls hands untyped results over as namedtuples; make them dicts and lists again."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)
