// Package sqlstore is the accounting database over database/sql: one
// schema, one query builder and one set of versioned migrations for
// SQLite (modernc.org/sqlite, embedded, the default), MariaDB/MySQL
// (go-sql-driver/mysql) and PostgreSQL (pgx). Dialects differ only in
// placeholders, column types, upsert syntax and the migration lock.
package sqlstore
