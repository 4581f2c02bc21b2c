"""The PostgreSQL session store: ``store.backend: postgresql`` with ``store.url: postgresql://...``.

Registered in ``hermes.session_stores`` exactly as a third-party backend would
be. psycopg is imported only when this backend is opened; install it with the
``postgresql`` extra (``pip install 'hermes-kernel[postgresql]'``).
"""

from .store import PostgresSessionStore

__all__ = ["PostgresSessionStore"]
