"""The conformance suite: property, stateful and snapshot tests run through an adapter.

Every test declares the requirement ids it checks (``@pytest.mark.req``) and the adapter
capability it needs (``@pytest.mark.capability``).  Tests state the seed's invariants
independently of the model; differential checks against the reference model (the
``oracle`` fixture) come in addition, never instead.
"""
