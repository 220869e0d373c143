"""Token counts with the embedding model's own WordPiece tokenizer, and its vocabulary's whole words."""

from __future__ import annotations

import os
from functools import lru_cache

from .embedder import MODEL_NAME, model_path


class TokenCounter:
    """Counts tokens with the embedding model's own WordPiece tokenizer (no extra download, deterministic)."""

    name = f"{MODEL_NAME}/wordpiece"

    def __init__(self):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(os.path.join(model_path(), "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        """The sum of the lines' counts (no WordPiece token spans a line break), each line's remembered: a prompt
        is its template's lines and its evidence entries' lines, counted once when assembly selected them."""
        return sum(_wordpiece_count(self._tokenizer, line) for line in text.split("\n"))


@lru_cache(maxsize=8192)
def _wordpiece_count(tokenizer, line: str) -> int:
    return len(tokenizer.encode(line, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def wordpiece_words() -> frozenset[str]:
    """The whole words of the model's WordPiece vocabulary (~22,500): a list of common English words that
    ships with the model, so nothing is downloaded."""
    with open(os.path.join(model_path(), "vocab.txt"), encoding="utf-8") as vocab:
        return frozenset(token for token in (line.strip() for line in vocab) if token.isalpha())


@lru_cache(maxsize=1)
def get_token_counter() -> TokenCounter:
    return TokenCounter()
