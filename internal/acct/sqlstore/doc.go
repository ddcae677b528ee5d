// Package sqlstore is the accounting database over database/sql: one
// schema, one query builder and one set of versioned migrations for
// SQLite (modernc.org/sqlite, embedded, the default), MariaDB/MySQL
// (go-sql-driver/mysql) and PostgreSQL (pgx). Dialects differ only in
// placeholders, column types and collations, upsert syntax, the
// migration lock, and how SQLite rows are read (packed.go).
//
// It owns the tables jobs, steps and schema_version and nothing else in
// the database. Text is stored as valid UTF-8 without NUL bytes on every
// dialect (others become U+FFFD), so that no record is ever refused for
// its bytes; errors that mean the server cannot be reached wrap
// acct.ErrUnavailable.
package sqlstore
