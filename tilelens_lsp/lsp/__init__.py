"""The editor face: a language server over stdio or TCP, the only package that imports pygls and lsprotocol.

In: LSP notifications and requests (documents opened, edited, saved; hovers, completions, code actions).
Out: diagnostics, hovers, directive help, code actions and lenses, converted from the `FileResult`s
the worker returns. server.py wires handlers to a Session (session.py), whose parts each own one
concern: editor.py, workerhost.py, scheduling.py, runs.py, progress.py, features.py; transport.py
hardens pygls' message loop. convert, hover, codeactions, codelens, directive_help and linemap turn
records and document text into what the editor shows.
"""
