"""The web page's own settings (``CITESTREAM_UI_*``), beside the shared ones in ``citestream.config``.

A class of its own so the page adds no field to the shared settings object;
``ui_`` because ``CITESTREAM_WEB_PORT`` is already faust's web/metrics port.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class WebSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CITESTREAM_UI_", extra="ignore")

    host: str = Field("127.0.0.1", description="Address `citestream web` listens on")
    port: int = Field(8088, description="Port `citestream web` listens on")
    group: str = Field("", description="Kafka consumer group of the page; empty = <app_id>-web")
    backlog: int = Field(50, ge=0, description="Records per partition the live view starts with")
    keep: int = Field(200, ge=10, description="Recent records of each kind sent to a browser when it connects "
                                              "(five times as many are kept for /api/answers/ID)")
    keep_mb: float = Field(16.0, gt=0, description="Most megabytes of records of each kind kept in memory")
    question_max_kb: float = Field(16.0, gt=0, description="Largest question body accepted (read no further)")
    max_streams: int = Field(32, ge=1, description="Live event streams open at once; more get 503")
    timeline_cache_s: float = Field(
        10.0, ge=0, description="A request's timeline is read from Kafka at most once in this long (later GETs "
                                "get the same read)")
    timeline_reads_per_minute: int = Field(
        30, ge=1, description="Timelines read from Kafka per minute, all requests together; more get 429")
    timeline_window: int = Field(
        2000, ge=10, description="A request timeline reads at most this many latest records per partition")
    upload_max_mb: float = Field(50.0, gt=0, description="Largest PDF the upload accepts")
    # What one client (one peer address) may make the page do (web/budgets.py; docs/security.md, "9. The page's limits")
    requests_per_minute: int = Field(
        240, ge=1, description="API requests one client may make a minute (a quarter of them at once); more get 429")
    writes_per_minute: int = Field(
        20, ge=1, description="Questions and uploads one client may send a minute (half of them at once); more get 429")
    upload_mb_per_day: float = Field(
        100.0, gt=0, description="Megabytes one client may upload a day (given back evenly over 24 h); more get 429")
    max_streams_per_client: int = Field(4, ge=1, description="Live event streams one client may hold at once")
    timeline_reads_per_client_per_minute: int = Field(
        10, ge=1, description="Timelines one client may have read from Kafka a minute (within the page's total)")
    pdf_jobs_per_client: int = Field(2, ge=1, description="Page images and chunk boxes one client may wait for at once")
    pdf_downloads_per_client: int = Field(
        4, ge=1, description="PDF files (/api/pdfs) one client may be sent at once; more get 429")
    # What the page takes and keeps, all clients together
    writes_per_minute_total: int = Field(
        300, ge=1, description="Questions and uploads the page takes a minute from all clients together (a tenth "
                               "at once): many addresses cannot make it flood the worker; more get 429")
    uploads_per_minute_total: int = Field(
        10, ge=1, description="Uploads the page takes a minute from all clients together (a tenth, at least one, at "
                              "once): each is an ingest and a new index version, which the next question reads "
                              "the corpus's vocabulary again for (about 1 s); more get 429")
    uploads_max_mb: float = Field(
        4096.0, gt=0, description="Megabytes all uploads on disk (<state>/uploads) may take; an upload past them "
                                  "gets 507")
    page_cache_mb: float = Field(
        1024.0, gt=0, description="Megabytes of rendered page images kept (<state>/web/pages); the least recently "
                                  "shown are removed first")
    pdf_jobs: int = Field(
        8, ge=1, description="Page images and chunk boxes rendering or waiting at once, all clients; more get 503")
    pdf_downloads: int = Field(
        16, ge=1, description="PDF files (/api/pdfs) being sent at once, all clients (each holds an open file and a "
                              "socket until its client has read it); more get 503")
    pdf_send_deadline_s: float = Field(
        30.0, gt=0, description="Seconds a PDF download (/api/pdfs) may wait for its client to take each chunk (64 "
                                "KiB); past them the download is ended and its slots given back, so clients that "
                                "stop reading cannot hold the page's downloads; also how long any connection's "
                                "unsent bytes may wait before the kernel ends it (TCP_USER_TIMEOUT)")
    boxes_kept: int = Field(2048, ge=0, description="Chunks whose highlight boxes are kept in memory")
    trusted_proxies: str = Field(
        "", description="Addresses of reverse proxies whose X-Forwarded-For names the visitor (comma-separated); "
                        "empty = none: a visitor is its peer address, whatever headers it sends")
    allowed_hosts: str = Field(
        "127.0.0.1,localhost",
        description="Host headers served (comma-separated; '*' for any). Guards against DNS rebinding")

    def host_list(self) -> list[str]:
        hosts = [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]
        if self.host not in ("0.0.0.0", "::", "") and self.host not in hosts and "*" not in hosts:
            hosts.append(self.host)
        return hosts

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}/"


@lru_cache(maxsize=1)
def get_web_settings() -> WebSettings:
    return WebSettings()
