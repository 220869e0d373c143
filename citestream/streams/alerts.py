"""qa.facts → fallback rate over answerable traffic per tumbling window (a faust table) → ops.alerts

Answerable traffic is every Phase A record that found evidence (at least one
accepted fact); a fallback event is such a record with ``fallback_used``. Each
answerable record, once its contract and seal are checked, becomes a sealed
``FallbackTick`` regrouped under one key, so one table partition sees the whole
stream whatever the number of workers: the repartition topic carries ticks of
under 300 bytes, not the records (which were a quarter of the embedded broker's
bytes). Each request id counts at most once per window: copies of a worker's
sealed record, republished, neither raise nor dilute the rate. A window alerts
once, when its rate first exceeds the threshold (qa-contract-v1 §3, with the
contract's message).
"""

from __future__ import annotations

import logging
from datetime import datetime, UTC

from pydantic import ValidationError

from ..models import FactsRecord, FallbackRateAlert, FallbackTick
from ..topics import spec
from .faust_app import app, kafka_topic, sealed, settings, stream_deps

log = logging.getLogger("citestream.streams.alerts")

GROUP_KEY = b"fallback-rate"
ANSWERABLE, FALLBACK, ALERTED = "answerable", "fallback", "alerted"
SEEN = "seen:"
"""Prefix of a window's key per request id already counted: each request counts at most once per window. The
keys live as long as the window's counts (they expire with it), so they are bounded by the requests a window sees;
a republished copy adds none."""

spec("qa.facts", FactsRecord)
spec("ops.alerts", FallbackRateAlert)
alerts_topic = kafka_topic("ops.alerts")

window_counts = app.Table(
    "fallback_rate_counts", default=int, key_type=str, value_type=int, partitions=1,
    help="Answerable / fallback / alerted counts per tumbling window",
).tumbling(settings.fallback_alert_window_s, expires=settings.fallback_alert_window_s * 4).relative_to_stream()


def fallback_alert(window_start: float, window_end: float, answerable: int, fallback: int, threshold: float,
                   min_answerable: int, policy_version: str | None) -> FallbackRateAlert | None:
    """The alert for a window whose fallback rate over answerable traffic exceeds ``threshold``, else None."""
    if answerable <= 0 or answerable < min_answerable:
        return None
    rate = fallback / answerable
    if rate <= threshold:
        return None
    return FallbackRateAlert(
        request_id=f"fallback-rate-{int(window_start)}", policy_version=policy_version or settings.policy_version,
        window_start=datetime.fromtimestamp(window_start, UTC),
        window_end=datetime.fromtimestamp(window_end, UTC),
        answerable_count=answerable, fallback_count=fallback, rate=round(rate, 6), threshold=threshold,
    )


# Every answerable record's tick under GROUP_KEY: one partition of this app's own repartition topic sees them all.
regrouped = app.topic(f"{settings.app_id}-{settings.topic('qa.facts')}-fallback-rate-repartition", key_type=bytes,
                      value_type=bytes, partitions=1, internal=True)


def _checked(model, value: bytes):
    """``value`` as ``model`` when it keeps the contract and a worker sealed it, else None: the filter agent
    dead-letters a ``qa.facts`` record that breaks either, and a tick no worker wrote is not counted."""
    try:
        record = model.model_validate_json(value)
    except (ValidationError, ValueError, TypeError):
        return None
    return None if stream_deps().sealer.problem(record) else record


@app.agent(kafka_topic("qa.facts"), name="citestream.fallback_rate")
async def fallback_rate(stream):
    async for value in stream:
        record = _checked(FactsRecord, value)
        if record is None or not record.facts:
            continue
        tick = FallbackTick(request_id=record.request_id, policy_version=record.policy_version,
                            fallback_used=record.fallback_used)
        await regrouped.send(key=GROUP_KEY, value=sealed(tick))


@app.agent(regrouped, name="citestream.fallback_rate_window")
async def fallback_window(stream):
    async for event in stream.events():
        tick = _checked(FallbackTick, event.value)
        if tick is None:
            continue
        seen = SEEN + tick.request_id  # a republished sealed record (or tick) is the same request: counted once
        if window_counts[seen].current():
            continue
        window_counts[seen] = 1
        window_counts[ANSWERABLE] += 1
        if tick.fallback_used:
            window_counts[FALLBACK] += 1
        if window_counts[ALERTED].current():
            continue
        start, _ = window_counts.table.window.current(event.message.timestamp)
        end = start + settings.fallback_alert_window_s  # faust's own end is inclusive (size − 0.1 s)
        alert = fallback_alert(start, end, window_counts[ANSWERABLE].current(), window_counts[FALLBACK].current(),
                               settings.fallback_alert_threshold, settings.fallback_alert_min_answerable,
                               tick.policy_version)
        if alert is not None:
            window_counts[ALERTED] = 1
            log.warning("%s window=%s..%s rate=%.3f", alert.message, alert.window_start, alert.window_end, alert.rate)
            await alerts_topic.send(key=alert.request_id.encode(), value=sealed(alert))
