"""SQLite storage: tables, engine, migrations, the DB worker thread and repositories."""
