"""citestream: grounded question answering on streams."""

import os

# torch's OpenMP threads sleep as soon as a forward pass ends instead of spinning for the next one: a worker runs
# a few small passes a question, and the spinning burnt a third of its CPU on 2 cores, taken from the SQL client,
# the broker and the other workers (docs/measurements.md, issue 16). Read once, when torch loads its OpenMP.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
