"""Fixtures and helpers for the reliability suites: private servers, worker processes, answer collection.

Fault tests stop Postgres and take the broker away, so they never use the shared
servers: each module gets its own embedded Postgres and broker on free ports
under pytest's tmp_path, and every worker it spawns is pointed at them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from citestream.config import PROJECT_ROOT, Settings
from citestream.infra.broker import EmbeddedBroker
from citestream.infra.postgres import EmbeddedPostgres
from citestream.models import QuestionEvent

from tests.support.common import WorkerProcess, new_request_id

WORKER_START_S = 600  # a worker loads its model in ~15 s alone, minutes on a busy 2-core machine

# The smoke documents answer these (and refuse the last): a mix like real traffic.
QUESTIONS = [
    "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?",
    "What complete remission rates has CD19 CAR-T cell therapy achieved in ALL?",
    "What does lecanemab target in early Alzheimer's disease?",
    "What is the boiling point of liquid nitrogen at sea level?",
]


def free_port(start: int) -> int:
    """The first port from ``start`` nothing is bound to. Tests start below Linux's ephemeral range (32768-60999):
    a port there can be any client socket's source port, which a server then fails to bind (seen in CI)."""
    for port in range(start, start + 100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {start}..{start + 99}")


@dataclass
class PrivateStack:
    """One private Postgres and broker, and the environment a worker needs to use them."""

    root: Path
    pg: EmbeddedPostgres
    broker: EmbeddedBroker
    prefix: str = "fault."
    database: str = "citestream_fault"

    @property
    def database_url(self) -> str:
        """The owner's DSN, with this private cluster's own passfile."""
        return self.pg.dsn("postgres", self.database)

    @property
    def settings(self) -> Settings:
        """The worker's: the app role's DSN with the cluster's app passfile (wherever this stack's state folder is)."""
        return Settings(broker_url=f"kafka://127.0.0.1:{self.broker.port}", database_url=self.database_url,
                        app_database_url=self.pg.dsn("citestream_app", self.database),
                        topic_prefix=self.prefix, app_id=f"citestream-{self.prefix.strip('.')}",
                        pg_port=self.pg.port, broker_port=self.broker.port, state_dir=self.root)

    def env(self, **extra: str) -> dict[str, str]:
        s = self.settings
        return {
            "CITESTREAM_DATABASE_URL": s.database_url, "CITESTREAM_APP_DATABASE_URL": s.app_database_url,
            "CITESTREAM_BROKER_URL": s.broker_url,
            "CITESTREAM_PG_PORT": str(s.pg_port), "CITESTREAM_BROKER_PORT": str(s.broker_port),
            "CITESTREAM_TOPIC_PREFIX": s.topic_prefix, "CITESTREAM_APP_ID": s.app_id,
            "CITESTREAM_STATE_DIR": str(s.state_dir),
            "CITESTREAM_RECONCILE_AFTER_S": "25", "CITESTREAM_RECONCILE_INTERVAL_S": "2",
            "CITESTREAM_STAGE_RETRY_MAX_S": "2", "HF_HUB_OFFLINE": "1", **extra,
        }

    def prepare(self) -> None:
        """Database migrated, topics created, smoke documents ingested."""
        self.pg.ensure_database(self.database)
        subprocess.run([sys.executable, "-m", "citestream", "migrate"], check=True, cwd=PROJECT_ROOT,
                       env={**os.environ, **self.env()}, capture_output=True)
        self.create_topics()
        ingest_smoke(self.database_url)

    def create_topics(self) -> None:
        from citestream.topics import create_topics

        create_topics(self.settings.bootstrap_servers, self.prefix, retention_hours=self.settings.topic_retention_hours)

    def worker(self, log_path: Path, **extra: str) -> WorkerProcess:
        return WorkerProcess(log_path, env=self.env(**extra), start_s=WORKER_START_S)

    def stop(self) -> None:
        self.broker.stop()
        self.pg.stop()


def ingest_smoke(database_url: str) -> None:
    from citestream.ops.demo_pdfs import smoke_dataset
    from citestream.embedding import get_embedder
    from citestream.ingest import from_text, ingest_document
    from citestream.store import ChunkStore, engine_for

    store, embedder = ChunkStore(engine_for(database_url)), get_embedder()
    for doc in smoke_dataset()["documents"]:
        ingest_document(from_text(doc["docId"], doc["text"], doc["title"], doc["source"], doc["metadata"]),
                        store, embedder)


@pytest.fixture(scope="module")
def private_stack():
    # Not under pytest's tmp_path: its folders are mode 700 and Postgres runs as its own system user.
    root = Path(tempfile.mkdtemp(prefix="citestream-fault-"))
    root.chmod(0o755)
    stack = PrivateStack(root, EmbeddedPostgres(root, free_port(25500)), EmbeddedBroker(root, free_port(29500)))
    try:
        stack.pg.start()
        stack.broker.start()
        stack.prepare()
        yield stack
    finally:
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)


def make_questions(n: int, prefix: str = "f") -> list[QuestionEvent]:
    return [QuestionEvent(request_id=new_request_id(f"{prefix}{i}"), question=QUESTIONS[i % len(QUESTIONS)])
            for i in range(n)]


async def publish(settings: Settings, records: list[QuestionEvent], per_second: float | None = None) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all", linger_ms=5)
    await producer.start()
    try:
        for record in records:
            await producer.send(settings.topic("questions"), value=record.model_dump_json().encode(),
                                key=record.request_id.encode())
            if per_second:
                await asyncio.sleep(1 / per_second)
        await producer.flush()
    finally:
        await producer.stop()


async def end_offsets(settings: Settings, topic: str) -> dict[int, int]:
    from aiokafka import AIOKafkaConsumer

    from citestream.ops.client import partitions_of

    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers)
    await consumer.start()
    try:
        tps = await partitions_of(consumer, settings, topic)
        return {tp.partition: off for tp, off in (await consumer.end_offsets(tps)).items()}
    finally:
        await consumer.stop()


class AnswerLog:
    """Every record on `answers` since ``since``, grouped by key: what a consumer deduplicating by key sees."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[dict]] = {}
        self.first_at: dict[str, float] = {}  # time.monotonic() when each key's first answer was read

    def add(self, key: str, value: bytes) -> None:
        import json

        self.by_key.setdefault(key, []).append(json.loads(value))
        self.first_at.setdefault(key, time.monotonic())

    @property
    def duplicates(self) -> int:
        return sum(len(v) - 1 for v in self.by_key.values())

    def differing(self) -> list[str]:
        """Keys whose copies differ in content (the trace's timings are not content, nor is the MAC, which covers
        them: a copy sent again by the worker that took over carries its own timings, so its own MAC)."""
        return [k for k, copies in self.by_key.items() if len({_content(c) for c in copies}) > 1]


def _content(answer: dict) -> str:
    import json

    return json.dumps({k: v for k, v in answer.items() if k not in ("trace", "mac")}, sort_keys=True)


async def collect_answers(settings: Settings, since: dict[int, int], wanted: set[str], timeout_s: float,
                          during=None) -> AnswerLog:
    """Read `answers` from ``since`` until every ``wanted`` key has an answer (or timeout).

    ``during(log)`` is awaited after each poll: the test's chance to kill or restart something mid-flight.
    """
    from citestream.ops.client import paced_consumer, partitions_of

    consumer = paced_consumer(settings)  # a spinning reader would take the CPU the recovering workers need
    await consumer.start()
    log = AnswerLog()
    try:
        tps = await partitions_of(consumer, settings, "answers")
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, since.get(tp.partition, 0))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not wanted <= log.by_key.keys():
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    log.add(m.key.decode(), m.value)
            if during is not None:
                await during(log)
        # a short grace period for duplicates still on their way
        end = time.monotonic() + 2
        while time.monotonic() < end:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    log.add(m.key.decode(), m.value)
    finally:
        await consumer.stop()
    return log



async def ask_and_collect(settings: Settings, questions: list[QuestionEvent], since: dict[int, int],
                          timeout_s: float, during=None, per_second: float | None = None) -> AnswerLog:
    """Publish ``questions`` (all before collecting, or paced at ``per_second`` while collecting); their answers."""
    sender = asyncio.create_task(publish(settings, questions, per_second=per_second))
    if per_second is None:
        await sender
    log = await collect_answers(settings, since, {q.request_id for q in questions}, timeout_s, during)
    await sender
    return log

def scrape_metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def metric_value(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        series, _, label_text = head.partition("{")
        if series != name:
            continue
        if all(f'{k}="{v}"' in label_text for k, v in labels.items()):
            total += float(value)
    return total

