"""The editor face: a language server over stdio or TCP, the only package that imports pygls and lsprotocol.

In: LSP notifications and requests (documents opened, edited, saved; hovers, completions, code actions).
Out: diagnostics, hovers, directive help, code actions and lenses, converted from the `FileResult`s
the worker returns. server.py builds the parts of one connection and wires handlers to them: the
editor (editor.py, all traffic with the client), the state (session.py, which also publishes), the
analysis (analysis/: when and how a document is analysed, the worker); the handlers call sync.py
for notifications and features/ for requests; transport.py hardens pygls' message loop. convert,
hover, codeactions, codelens, directive_help and linemap turn records and document text into what
the editor shows.
"""
