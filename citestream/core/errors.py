"""The one exception a stage raises to refuse a record: the stream adapter dead-letters it with the code."""

from __future__ import annotations


class RecordRejected(Exception):
    """A record that cannot go on: dead-letter it with ``code`` and a short, scrubbed ``reason``."""

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


class CannotStart(Exception):
    """A command cannot run here for a reason the user can fix: printed as one line (why, and what to do), no
    traceback (``cli.main``)."""
