"""A consumer told its generation is stale rejoins under the member id it has, as Kafka's own clients do.

aiokafka 0.14 forgets its member id on ``ILLEGAL_GENERATION`` (an offset commit, heartbeat or sync that raced a
rebalance) and joins again as a new member. On Apache Kafka the old member's session then expires. The embedded
noida broker never expires a session: the old member stays in the group, can be elected leader, never syncs, and
the group waits in CompletingRebalance with every live member idle until the group watchdog evicts everyone — and a
commit racing that rebalance makes the next ghost. Reproduced with two consumers and a leader whose assignment
takes 3 s (docs/reliability.md); it is how a clean-clone CI run of the rolling-restart fault test stalled for
600 s. Apache Kafka's Java client (KAFKA-13419) and kafka-python (PR 3017) keep the member id on
``ILLEGAL_GENERATION`` and reset it only on ``UNKNOWN_MEMBER_ID``; this module makes aiokafka do the same.

Every coordinator request goes through ``GroupCoordinator._send_req``, and aiokafka handles its answer without
awaiting in between, so the error codes of the last answer are the ones ``reset_generation`` is called for.
"""

from __future__ import annotations

from aiokafka import errors
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.protocol.commit import OffsetCommitRequest

ILLEGAL_GENERATION = errors.IllegalGenerationError.errno
UNKNOWN_MEMBER_ID = errors.UnknownMemberIdError.errno

_original_send_req = GroupCoordinator._send_req
_original_reset_generation = GroupCoordinator.reset_generation


def error_codes(response) -> set[int]:
    """The non-zero error codes of a coordinator response: its own, and an offset commit's per partition."""
    codes = {getattr(response, "error_code", 0) or 0}
    for item in getattr(response, "topics", None) or ():
        partitions = item[1] if isinstance(item, tuple) and len(item) > 1 else ()
        codes.update(p[1] for p in partitions if isinstance(p, tuple) and len(p) > 1 and isinstance(p[1], int))
    return codes - {0}


def keeps_member_id(codes: set[int]) -> bool:
    """A stale generation keeps the member id; an unknown member (or no answer to go by) does not."""
    return ILLEGAL_GENERATION in codes and UNKNOWN_MEMBER_ID not in codes


async def _send_req(self, request):
    self._citestream_answer_codes = set()
    response = await _original_send_req(self, request)
    self._citestream_answer_codes = error_codes(response)
    return response


def _reset_generation(self):
    codes = getattr(self, "_citestream_answer_codes", set())  # one answer can reset once per partition
    if not keeps_member_id(codes):
        return _original_reset_generation(self)
    self.generation = OffsetCommitRequest.DEFAULT_GENERATION_ID
    self.request_rejoin()


def apply() -> None:
    """Patch aiokafka's group coordinator once per process (idempotent)."""
    GroupCoordinator._send_req = _send_req  # type: ignore[method-assign]
    GroupCoordinator.reset_generation = _reset_generation  # type: ignore[method-assign]
