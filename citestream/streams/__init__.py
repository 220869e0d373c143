"""The stream layer: the faust app (``faust_app``), the agents generated from ``citestream.flow.FLOW``
(``agents``; importing it wires every agent and the fallback-rate alert, ``alerts``), intake checks and the broker
fixes (``faust_fixes``, ``idle_fetch``, ``member_id``).

Importing this package wires nothing, so a Kafka client (the web page, ``ops.client``) can use the broker fixes
without the agents.
"""
