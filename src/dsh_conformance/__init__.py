"""dsh-conformance: the conformance suite and reference model for DeepSeek-Harness-style
cross-session references and interactive side sessions."""

__version__ = "0.1.0"
