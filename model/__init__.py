"""The executable reference model: one module per concept of the two seed notes.

Pure functions and frozen values, except where the seeds have state (inbox, sessions).
Every requirement a module implements is named in its docstrings by its spec/ id.
"""
