"""Alembic environment: the URL comes from the citestream settings (or the caller's config)."""

from alembic import context
from sqlalchemy import create_engine

from citestream.config import get_settings
from citestream.store.db import sqlalchemy_url
from citestream.store.tables import metadata

config = context.config
url = config.get_main_option("sqlalchemy.url") or sqlalchemy_url(get_settings().database_url)

if context.is_offline_mode():
    context.configure(url=url, target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    engine = create_engine(url)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
