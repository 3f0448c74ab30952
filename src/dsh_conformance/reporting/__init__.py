"""Renderers of run records: terminal, Markdown, JUnit XML, HTML matrix, JSON, diffs.

Every renderer reads a ``RunRecord`` (record.py) and escapes all text that came from
an adapter before it reaches a terminal, an XML file or a browser (escape.py).
"""
