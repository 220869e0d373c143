"""A worker waits for its servers instead of crashing when it starts before them."""

from __future__ import annotations

from ..config import Settings


def wait_for_servers(settings: Settings, log) -> None:
    """Block until the broker accepts connections and Postgres answers, saying clearly what is awaited.

    A worker started before its servers (a fresh deployment, a broker restart)
    waits instead of crashing; ``startup_wait_s`` > 0 bounds the wait.
    """
    import socket
    import time

    from sqlalchemy import text

    started = time.monotonic()

    def waited_too_long(what: str) -> None:
        if settings.startup_wait_s and time.monotonic() - started > settings.startup_wait_s:
            raise SystemExit(f"gave up waiting for {what} after {settings.startup_wait_s:.0f}s")

    hosts = [h.rsplit(":", 1) for h in settings.bootstrap_servers.split(",")]
    attempt = 0
    while True:
        reachable = []
        for host, port in hosts:
            with socket.socket() as s:
                s.settimeout(1.0)
                reachable.append(s.connect_ex((host, int(port))) == 0)
        if any(reachable):
            break
        attempt += 1
        if attempt == 1 or attempt % 10 == 0:
            log.warning("waiting for the Kafka broker at %s (not reachable yet, attempt %d); "
                        "the worker starts when it appears", settings.bootstrap_servers, attempt)
        waited_too_long("the broker")
        time.sleep(1.0)
    if attempt:
        log.warning("Kafka broker at %s is up after %.0fs; starting", settings.bootstrap_servers,
                    time.monotonic() - started)
    from ..store import engine_for

    attempt = 0
    while True:
        try:
            with engine_for(settings.app_dsn).connect() as conn:
                conn.execute(text("SELECT 1"))
            break
        except Exception as exc:  # OperationalError and friends while Postgres starts
            attempt += 1
            if attempt == 1 or attempt % 10 == 0:
                log.warning("waiting for Postgres (%s, attempt %d): %s", settings.database_url.split("@")[-1],
                            attempt, str(exc).splitlines()[0])
            waited_too_long("Postgres")
            time.sleep(1.0)
