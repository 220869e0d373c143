"""The token counter assembly is handed (the embedding model's tokenizer, or a stand-in in tests)."""

from __future__ import annotations

from collections.abc import Callable

TokenCount = Callable[[str], int]
