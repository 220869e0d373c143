"""The token counter assembly is handed (the embedding model's tokenizer, or a stand-in in tests)."""

from __future__ import annotations

from collections.abc import Callable

TokenCount = Callable[[str], int]
"""Tokens in a text. Additive over lines: the count of ``a + "\\n" + b`` is the count of ``a`` plus the count of
``b`` (a WordPiece token never spans whitespace), so assembly sums its evidence entries instead of recounting the
growing block for every chunk it adds."""
