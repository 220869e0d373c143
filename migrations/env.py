"""Alembic environment: the URL comes from the citestream settings (or the caller's config).

Migrations run as the database owner (``CITESTREAM_DATABASE_URL``). When an
application or page password is configured (``CITESTREAM_APP_DB_PASSWORD``,
``CITESTREAM_PAGE_DB_PASSWORD``, the Docker path) the role gets it here, after the
migrations that create it; the embedded server sets its own at start
(``infra.postgres``).
"""

from alembic import context
from sqlalchemy import create_engine

from citestream.config import get_settings
from citestream.store.db import sqlalchemy_url
from citestream.store.tables import metadata

config = context.config
settings = get_settings()
url = config.get_main_option("sqlalchemy.url") or sqlalchemy_url(settings.database_url)

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
        from citestream.infra.postgres import ensure_login_role

        for role, password in ((settings.app_db_user, settings.app_db_password),
                               (settings.page_db_user, settings.page_db_password)):
            if password is not None:
                ensure_login_role(connection.connection.driver_connection, role, password.get_secret_value())
                connection.commit()
    engine.dispose()
