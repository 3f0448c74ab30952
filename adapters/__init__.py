"""Adapters: the contract, the in-process reference model, subprocess and upstream adapters."""
