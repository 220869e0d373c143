"""The web page's stack (a worker on its own topics, a database, `citestream web`), one for this package: stopped
when its tests are done, so its idle processes do not share the CPU with the corpus suites that run last."""

import httpx
import pytest

from tests.support.web import web_stack  # noqa: F401


@pytest.fixture()
def http(web_stack):
    with httpx.Client(base_url=web_stack.url, timeout=30) as client:
        yield client
