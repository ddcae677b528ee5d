// Package acct owns the accounting records (jobs and their steps as sacct
// shows them) and the Store interface their databases implement.
//
// The controller hands records to a Store through the durable outbox kept
// in replicated state (see package controller); sacct, sreport and the
// REST API read them back with Query. Implementations live in subpackages
// (sqlstore: SQLite, MariaDB/MySQL, PostgreSQL) and must all pass the one
// conformance suite in accttest.
package acct
