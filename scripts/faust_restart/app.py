"""A faust app shaped like citestream's worker (two chained agents, a windowed table, the group watchdog).

Used by ``drive.py`` to find why records were skipped after a kill -9 (docs/security.md, point 3).
FAUST_FIXES=1 applies ``citestream.streams.faust_fixes`` (without importing the whole app).
"""

import asyncio
import importlib.util
import logging
import os
import sys
import threading
from pathlib import Path

import faust

PREFIX, OUT = os.environ["EXP_PREFIX"], os.environ["EXP_OUT"]
BROKER = os.environ.get("EXP_BROKER", "kafka://127.0.0.1:59132")
ROOT = Path(__file__).resolve().parents[2]

app = faust.App(f"exp-{PREFIX.strip('.')}", broker=BROKER, store="memory://", key_serializer="raw",
                value_serializer="raw", consumer_auto_offset_reset="earliest", broker_session_timeout=6,
                broker_heartbeat_interval=1.0, broker_rebalance_timeout=12, producer_acks=-1, web_enabled=False,
                topic_partitions=4)
q = app.topic(PREFIX + "q", key_type=bytes, value_type=bytes, partitions=4)
f = app.topic(PREFIX + "f", key_type=bytes, value_type=bytes, partitions=4)
out = app.topic(PREFIX + "out", key_type=bytes, value_type=bytes, partitions=4)
counts = app.Table("counts", default=int, key_type=str, value_type=int, partitions=1).tumbling(
    300, expires=1200).relative_to_stream()
regrouped = app.topic(f"exp-{PREFIX}f-repartition", key_type=bytes, value_type=bytes, partitions=1, internal=True)
log = open(OUT, "a", buffering=1)  # noqa: SIM115 - the experiment's log, open for the process's life


@app.agent(q)
async def stage1(stream):
    async for event in stream.events():
        await asyncio.sleep(0.05)
        log.write(f"s1 {event.message.partition} {event.message.offset} {event.key.decode()}\n")
        await f.send(key=event.key, value=event.value)


@app.agent(f)
async def stage2(stream):
    async for event in stream.events():
        await asyncio.sleep(0.05)
        log.write(f"s2 {event.message.partition} {event.message.offset} {event.key.decode()}\n")
        await out.send(key=event.key, value=event.value)


@app.agent(f)
async def rate(stream):
    async for _ in stream.group_by(lambda v: b"k", name="rate", topic=regrouped).events():
        counts["n"] += 1


if __name__ == "__main__":
    logging.basicConfig(level="INFO")
    sys.path.insert(0, str(ROOT))
    from citestream.ops import reconcile
    from citestream.config import Settings

    settings = Settings(broker_url=BROKER, broker_session_timeout_s=6)
    threading.Thread(target=reconcile.stuck_group_watchdog, args=(settings, [app.conf.id]), daemon=True).start()
    if os.environ.get("FAUST_FIXES"):
        spec = importlib.util.spec_from_file_location("faust_fixes", ROOT / "citestream/streams/faust_fixes.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.apply()
    faust.Worker(app, loglevel="info", quiet=True).execute_from_commandline()
