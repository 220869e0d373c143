"""One agent per row of ``flow.FLOW``, each named ``citestream.<stage>`` and reading the row's source topic."""

from ..flow import FLOW
from .app import wire

for _step in FLOW:
    wire(_step)
