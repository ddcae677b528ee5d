package sqlstore

import (
	"github.com/drover-hpc/drover/internal/acct"

	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are the schema's versions in order: migration i brings a
// database from version i to i+1. Each is applied once, in a transaction
// where the database allows DDL in one, and recorded in schema_version.
// Add to the end; never edit one that has shipped.
var migrations = []func(d *dialect) []string{
	// 1 and 2 create and widen the columns the schema had then (v1Cols);
	// later migrations add the rest.
	func(d *dialect) []string {
		jobIdx := [][2]string{
			{"jobs_submit", "cluster, submit"},
			{"jobs_end", "cluster, end_time"},
			{"jobs_uid", "uid"},
			{"jobs_array", "array_job_id, cluster"},
			{"jobs_id", "job_id"},
		}
		if d.name == "mysql" {
			// MySQL has no CREATE INDEX IF NOT EXISTS (MariaDB does):
			// indexes go inside the re-runnable CREATE TABLE.
			t := createTable(d, "jobs", v1JobCols(), "cluster", "job_id")
			var idx []string
			for _, i := range jobIdx {
				idx = append(idx, fmt.Sprintf("INDEX %s (%s)", i[0], i[1]))
			}
			t = strings.Replace(t, "PRIMARY KEY (cluster, job_id))", "PRIMARY KEY (cluster, job_id), "+strings.Join(idx, ", ")+")", 1)
			return []string{t, createTable(d, "steps", v1StepCols(), "cluster", "job_id", "step_id")}
		}
		out := []string{createTable(d, "jobs", v1JobCols(), "cluster", "job_id"),
			createTable(d, "steps", v1StepCols(), "cluster", "job_id", "step_id")}
		for _, i := range jobIdx {
			out = append(out, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON jobs (%s)", i[0], i[1]))
		}
		return out
	},
	// 2: on MySQL, job names of any length (VARCHAR(191) refused longer
	// ones, which stopped the outbox), free text over 64 KiB (MEDIUMTEXT),
	// and texts that differ only in trailing spaces differ (see noPad).
	// On PostgreSQL, clusters sort bytewise whatever the database's
	// locale ("B" before "a"), as on the other two.
	func(d *dialect) []string {
		switch d.name {
		case "mysql":
			var out []string
			if d.collation != "" {
				for _, t := range []string{"jobs", "steps"} {
					out = append(out, "ALTER TABLE "+t+" CONVERT TO CHARACTER SET utf8mb4 COLLATE "+d.collation)
				}
			}
			return append(out, widenText(d, "jobs", v1JobCols()), widenText(d, "steps", v1StepCols()))
		case "postgres":
			return []string{
				`ALTER TABLE jobs ALTER COLUMN cluster TYPE TEXT COLLATE "C"`,
				`ALTER TABLE steps ALTER COLUMN cluster TYPE TEXT COLLATE "C"`,
			}
		}
		return nil
	},
	// 3: the earlier runs of requeued jobs (sacct -D).
	func(d *dialect) []string {
		c := jobCols[len(jobCols)-1]
		return []string{"ALTER TABLE jobs ADD COLUMN " + c.name + " " + colType(d, c)}
	},
	// 4: the time a step spent suspended (sacct leaves it out of Elapsed).
	func(d *dialect) []string {
		c := stepCols[len(stepCols)-1]
		return []string{"ALTER TABLE steps ADD COLUMN " + c.name + " " + colType(d, c)}
	},
}

// laterJobCols counts the columns at the end of jobCols that migrations
// after the second add.
const laterJobCols = 1

func v1JobCols() []column[acct.Job] { return jobCols[:len(jobCols)-laterJobCols] }

// laterStepCols counts the columns at the end of stepCols that migrations
// after the second add.
const laterStepCols = 1

func v1StepCols() []column[stepRow] { return stepCols[:len(stepCols)-laterStepCols] }

// widenText is the ALTER TABLE giving table's free-text columns their
// current type (re-runnable: MODIFY to the same type changes nothing).
func widenText[T any](d *dialect, table string, cols []column[T]) string {
	var mods []string
	for _, c := range cols {
		if c.kind == kText {
			mods = append(mods, "MODIFY "+c.name+" "+colType(d, c))
		}
	}
	return "ALTER TABLE " + table + " " + strings.Join(mods, ", ")
}

// SchemaVersion is the version this build's migrations reach.
var SchemaVersion = len(migrations)

// migrate brings the schema up to date under a lock, so that two
// processes opening one database at once do not both apply a migration.
func migrate(ctx context.Context, db *sql.DB, d *dialect) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	unlock, err := lock(ctx, conn, d)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version "+d.intType+" NOT NULL)"); err != nil {
		return err
	}
	var v sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_version").Scan(&v); err != nil {
		return err
	}
	cur := int(v.Int64)
	if cur > len(migrations) {
		return fmt.Errorf("the accounting database has schema version %d, newer than this Drover's %d: upgrade Drover", cur, len(migrations))
	}
	for i := cur; i < len(migrations); i++ {
		if err := applyMigration(ctx, conn, d, i); err != nil {
			return fmt.Errorf("accounting schema migration %d: %w", i+1, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, conn *sql.Conn, d *dialect, i int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Re-read inside the transaction: on SQLite it is what serialises
	// two processes migrating at once.
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_version").Scan(&v); err != nil {
		return err
	}
	if int(v.Int64) > i {
		return nil
	}
	for _, stmt := range migrations[i](d) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%w (in %.60s...)", err, stmt)
		}
	}
	ph := "?"
	if d.numbered {
		ph = "$1"
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES ("+ph+")", i+1); err != nil {
		return err
	}
	return tx.Commit()
}

// lock takes the database-wide migration lock on conn.
func lock(ctx context.Context, conn *sql.Conn, d *dialect) (func(), error) {
	switch d.name {
	case "mysql":
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('drover_acct_migrate', 60)").Scan(&got); err != nil {
			return nil, err
		}
		if got.Int64 != 1 {
			return nil, fmt.Errorf("another process holds the migration lock")
		}
		return func() { _, _ = conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK('drover_acct_migrate')") }, nil
	case "postgres":
		const key = 0x6472_6f76 // "drov"
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
			return nil, err
		}
		return func() { _, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", key) }, nil
	}
	// SQLite: every transaction is BEGIN IMMEDIATE (see Open), which
	// takes the database's write lock; the version read and the
	// migrations happen inside one such transaction per migration, and
	// a second process re-reads the version after waiting.
	return func() {}, nil
}
