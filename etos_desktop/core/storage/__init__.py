"""SQLite storage: tables, engine, migrations, the DB worker thread, repositories, shared lookups."""
