"""The web page: ask, read answers with their citations, watch the flow, check a cited page, upload PDFs.

A Kafka client like any other consumer (``bridge``), served by Starlette and
uvicorn (``app``); see docs/web.md.
"""

from .app import create_app

__all__ = ["create_app"]
