"""The default engine follows the settings: a process whose database setting changes gets its new database."""

from citestream.config import get_settings
from citestream.store import engine_for


def test_the_default_engine_is_the_one_of_the_settings_as_they_are_now(monkeypatch):
    names = []
    try:
        for name in ("citestream_engine_a", "citestream_engine_b"):
            monkeypatch.setenv("CITESTREAM_DATABASE_URL", f"postgresql://postgres@127.0.0.1:55432/{name}")
            get_settings.cache_clear()
            names.append(engine_for().url.database)
    finally:
        get_settings.cache_clear()
    assert names == ["citestream_engine_a", "citestream_engine_b"]
