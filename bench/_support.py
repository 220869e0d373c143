"""What the benchmarks share: the ingested corpus, a worker process, percentiles, question lists."""

from __future__ import annotations

import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

from citestream.config import PROJECT_ROOT
from citestream.infra.worker import WorkerProcess

CORPUS = Path(os.environ.get("CITESTREAM_CORPUS", PROJECT_ROOT.parent / "shared" / "corpus")).resolve()

# Generic questions a regulatory reader asks; the bench cycles through them (answers or refusals both count).
QUESTIONS = [
    "What should an ANDA applicant submit to reference a listed drug?",
    "When does FDA refuse to file an NDA or BLA?",
    "What are the requirements for electronic signatures under 21 CFR Part 11?",
    "How should stability testing of drug products be designed?",
    "What is the purpose of a target product profile?",
    "What does quality risk management mean in ICH Q9?",
    "What is a design space in pharmaceutical development?",
    "Which elements should a process validation program include?",
    "How are impurities in drug products reported and qualified?",
    "What information belongs in a Phase 1 IND submission?",
    "What happens during a bioresearch monitoring inspection?",
    "How should bioavailability studies be conducted?",
    "What is the role of the starting material in drug substance development?",
    "When can a pre-submission meeting be requested for a complex generic product?",
    "What are common deficiencies in ANDA submissions?",
    "What is the capital of France?",
    "How long must audit trail records be retained?",
    "What is continuous manufacturing?",
    "How does FDA define a complex product for ANDA meetings?",
    "What controls are expected for computerized systems used in clinical trials?",
]


def questions(n: int) -> list[str]:
    return [f"{QUESTIONS[i % len(QUESTIONS)]}" for i in range(n)]


def unique_question(i: int, tag: str = "") -> str:
    """The ``i``-th question, numbered (and tagged) so no two are alike: a repeated question would be answered
    from the relevance model's score cache, and the model would look free."""
    return f"{QUESTIONS[i % len(QUESTIONS)]} ({tag}{' ' if tag else ''}{i})"


def unique_questions(n: int, tag: str = "") -> list[str]:
    return [unique_question(i, tag) for i in range(n)]


HELD_OUT = PROJECT_ROOT / "tests" / "golden" / "qa_v2_test.jsonl"


def held_out_questions() -> list[str]:
    """The qa-v2 test split's 122 questions as written (long, reworded, with typos and background; a third
    unanswerable): what a question costs is measured on questions like users ask, not on short templates. Only
    their cost is read here, never their answers."""
    import json

    return [json.loads(line)["question"] for line in HELD_OUT.read_text().splitlines() if line.strip()]


def ensure_corpus() -> None:
    """Ingest ../shared/corpus into the bench database; unchanged files (same bytes, authority and ingest pipeline)
    are skipped, so after the first run this only reads the PDFs."""
    from citestream.cli import main

    main(["ingest", str(CORPUS)])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class Worker(WorkerProcess):
    """A worker for the duration of a benchmark, ready once constructed; a generous start deadline for a loaded box."""

    def __init__(self, log: Path, env: dict[str, str] | None = None,
                 timeout_s: float = float(os.environ.get("BENCH_WORKER_START_S", "600"))):
        super().__init__(log, env=env, start_s=timeout_s)
        self.wait_ready()


class _Broker:
    def __init__(self, url: str, data: Path):
        self.url, self.data = url, data

    def store_bytes(self) -> int:
        """What the broker keeps on disk now (its snapshot)."""
        return sum(f.stat().st_size for f in self.data.rglob("*") if f.is_file())


@contextmanager
def fresh_broker(folder: Path, kind: str = "noida"):
    """An embedded broker of its own on a free port, its store empty, this run's topics created on it; stopped and
    its store removed after. A figure then does not depend on what earlier runs left on the shared broker."""
    from citestream.config import get_settings
    from citestream.infra.broker import EmbeddedBroker
    from citestream.topics.admin import create_topics

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    broker = EmbeddedBroker(folder, port, kind)
    broker.start()
    try:
        settings = get_settings()
        url = f"kafka://127.0.0.1:{port}"
        create_topics(f"127.0.0.1:{port}", settings.topic_prefix, override=settings.topic_partitions)
        yield _Broker(url, broker.root / kind)
    finally:
        broker.stop()
        shutil.rmtree(broker.root, ignore_errors=True)
