"""The answers to the editor's requests, as functions of (session, editor, params).

They read what the last run published (never the worker, except TL100's fix, which asks the
analysis for a compiled example launch), so they answer while an analysis runs or hangs. Each module
finds the document and the position and converts; the content comes from the pure modules beside
this package (hover.py, directive_help.py, codeactions.py, codelens.py, convert.py), which are
tested without a client. server.py calls these; nothing here keeps state.
"""
