"""The records the page keeps for browsers that connect later: bounded in count and in bytes.

One record on ``answers`` may be up to 900 kB, so a count alone let a few hundred large records hold hundreds of
megabytes. Each kind keeps its records in arrival order, each with its size (its JSON for the browser); the
oldest go first when the count or the byte budget is exceeded, and the latest record of each request_id stays
findable (``latest``) while it is kept.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from itertools import count, islice

from .views import WebEvent


def event_bytes(event: WebEvent) -> int:
    """What keeping ``event`` costs, measured as the JSON a browser receives."""
    return len(json.dumps(event.model_dump(mode="json"), ensure_ascii=False).encode())


class KeptEvents:
    """One kind's records: at most ``max_count`` of them and ``max_bytes`` together, the newest kept."""

    def __init__(self, max_count: int, max_bytes: int):
        self.max_count, self.max_bytes = max_count, max_bytes
        self.bytes = 0
        self._events: OrderedDict[int, tuple[WebEvent, int]] = OrderedDict()  # arrival number → (event, size)
        self._by_request: dict[str, int] = {}
        self._numbers = count()

    def add(self, event: WebEvent) -> None:
        size = event_bytes(event)
        if size > self.max_bytes:
            return  # larger than the whole budget: never kept (the live stream still passes it on)
        number = next(self._numbers)
        self._events[number] = (event, size)
        self.bytes += size
        if event.request_id is not None:
            self._by_request[event.request_id] = number
        while len(self._events) > self.max_count or self.bytes > self.max_bytes:
            _, (old, old_size) = self._events.popitem(last=False)
            self.bytes -= old_size
            if old.request_id is not None and self._by_request.get(old.request_id) not in self._events:
                self._by_request.pop(old.request_id, None)

    def latest(self, request_id: str) -> WebEvent | None:
        number = self._by_request.get(request_id)
        return None if number is None else self._events[number][0]

    def recent(self, limit: int) -> list[WebEvent]:
        """The newest ``limit`` records, oldest first."""
        newest = list(islice(reversed(self._events.values()), limit))
        return [event for event, _ in reversed(newest)]

    def __len__(self) -> int:
        return len(self._events)
