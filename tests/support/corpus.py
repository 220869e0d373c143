"""A database and topic prefix of its own holding only ../shared/corpus, so no other suite's documents leak in."""

from __future__ import annotations

import os
import subprocess
import sys

from citestream import infra
from citestream.config import PROJECT_ROOT, Settings


def corpus_settings(base: Settings) -> Settings:
    """``<test database>_corpus`` and ``<prefix>corpus.``: stable names, so the ingested corpus is reused.

    CITESTREAM_EVAL_CORPUS_DATABASE_URL points at a database that already holds the corpus (e.g. make eval's).
    """
    url = base.database_url.rsplit("/", 1)
    return base.model_copy(update={
        "database_url": os.environ.get("CITESTREAM_EVAL_CORPUS_DATABASE_URL", f"{url[0]}/{url[1]}_corpus"),
        "topic_prefix": f"{base.topic_prefix}corpus.",
        "app_id": f"{base.app_id}-corpus",
    })


def corpus_env(settings: Settings) -> dict[str, str]:
    return {**os.environ, "CITESTREAM_DATABASE_URL": settings.database_url,
            "CITESTREAM_TOPIC_PREFIX": settings.topic_prefix, "CITESTREAM_APP_ID": settings.app_id,
            "HF_HUB_OFFLINE": "1"}


def prepare_corpus_database(settings: Settings, corpus_dir, nice: int = 0) -> None:
    """Create and migrate the database, create the topics, ingest the corpus (unchanged PDFs are skipped)."""
    if settings.infra != "docker":
        infra.servers(settings)[0].ensure_database(infra.database_name(settings))
    env = corpus_env(settings)
    for args in (["migrate"], ["topics", "create"], ["ingest", str(corpus_dir)]):
        subprocess.run(["nice", "-n", str(nice), sys.executable, "-m", "citestream", *args], env=env,
                       cwd=PROJECT_ROOT, check=True, stdout=subprocess.DEVNULL)
