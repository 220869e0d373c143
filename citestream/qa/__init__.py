"""The question path's parts, one subpackage per stage in the order a question meets them:
``retrieve`` → ``filter`` → ``assemble`` → ``generate`` → ``validate``.

The stage functions (``citestream.stages``) call into these; no subpackage imports another (``make lint``).
"""
