"""citestream: grounded question answering on streams."""

__version__ = "0.1.0"
