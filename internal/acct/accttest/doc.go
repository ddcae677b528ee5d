// Package accttest holds what tests of accounting stores share: the
// conformance suite every acct.Store must pass (Run), and throwaway
// MariaDB and PostgreSQL servers started from the Debian packages'
// binaries in private directories (StartMariaDB, StartPostgres).
package accttest
