// Package storage opens the accounting store slurm.conf (or
// slurmdbd.conf) names: the embedded SQLite database by default, MariaDB/
// MySQL or PostgreSQL directly, or a drover dbd over the network. It only
// chooses and connects; the stores themselves live in acct/sqlstore and
// acct/remote.
package storage
