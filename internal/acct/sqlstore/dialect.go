package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// dialect is what differs between the databases.
type dialect struct {
	name   string // "sqlite", "mysql", "postgres"
	driver string // database/sql driver name
	// numbered placeholders ($1, $2) instead of ?.
	numbered bool
	intType  string
	keyType  string // short indexed text
	textType string // text of any length (MySQL's TEXT stops at 64 KiB)
	// maxParams bounds the placeholders of one statement.
	maxParams int
	// packRows: read rows as one packed text (see packedExpr).
	packRows bool
	// collation is MySQL's bytewise utf8mb4 collation that does not
	// ignore trailing spaces, where the server has one (see noPad).
	collation string
}

var dialects = map[string]*dialect{
	"sqlite":   {name: "sqlite", driver: "sqlite", intType: "INTEGER", keyType: "TEXT", textType: "TEXT", maxParams: 30000, packRows: true},
	"mysql":    {name: "mysql", driver: "mysql", intType: "BIGINT", keyType: "VARCHAR(191)", textType: "MEDIUMTEXT", maxParams: 60000},
	"postgres": {name: "postgres", driver: "pgx", numbered: true, intType: "BIGINT", keyType: "TEXT", textType: "TEXT", maxParams: 60000},
}

// aliases are the other names of the dialects in Config.Driver and
// slurm.conf.
var aliases = map[string]string{
	"sqlite3": "sqlite", "mariadb": "mysql", "postgresql": "postgres", "pgsql": "postgres", "pgx": "postgres",
}

func lookupDialect(name string) (*dialect, error) {
	n := strings.ToLower(name)
	if a, ok := aliases[n]; ok {
		n = a
	}
	d := dialects[n]
	if d == nil {
		return nil, fmt.Errorf("unknown accounting database driver %q (want sqlite, mysql or postgres)", name)
	}
	return d, nil
}

// args builds placeholders: the n-th argument of a statement (from 1).
type args struct {
	d    *dialect
	vals []any
}

func (a *args) add(v any) string {
	a.vals = append(a.vals, v)
	if a.d.numbered {
		return "$" + strconv.Itoa(len(a.vals))
	}
	return "?"
}

func colType[T any](d *dialect, c column[T]) string {
	switch c.kind {
	case kInt:
		return d.intType + " NOT NULL DEFAULT 0"
	case kKey:
		return d.keyType + " NOT NULL DEFAULT ''"
	}
	if d.name == "mysql" {
		// MySQL gives TEXT columns no literal default before 8.0.13 and
		// MariaDB 10.2; every insert names every column anyway.
		return d.textType + " NOT NULL"
	}
	return d.textType + " NOT NULL DEFAULT ''"
}

func createTable[T any](d *dialect, table string, cols []column[T], key ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (", table)
	for _, c := range cols {
		fmt.Fprintf(&b, "%s %s, ", c.name, colType(d, c))
	}
	fmt.Fprintf(&b, "PRIMARY KEY (%s))", strings.Join(key, ", "))
	if d.name == "mysql" {
		b.WriteString(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=" + cmp.Or(d.collation, "utf8mb4_bin"))
	}
	return b.String()
}

func colNames[T any](cols []column[T], prefix string) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = prefix + c.name
	}
	return strings.Join(names, ", ")
}

// upsert is an INSERT of rows rows that replaces rows with the same key.
func upsert[T any](d *dialect, table string, cols []column[T], key []string, rows int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, colNames(cols, ""))
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			n++
			if d.numbered {
				b.WriteString("$" + strconv.Itoa(n))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	isKey := map[string]bool{}
	for _, k := range key {
		isKey[k] = true
	}
	var sets []string
	for _, c := range cols {
		if isKey[c.name] {
			continue
		}
		if d.name == "mysql" {
			sets = append(sets, fmt.Sprintf("%s = VALUES(%s)", c.name, c.name))
		} else {
			sets = append(sets, fmt.Sprintf("%s = excluded.%s", c.name, c.name))
		}
	}
	if d.name == "mysql" {
		fmt.Fprintf(&b, " ON DUPLICATE KEY UPDATE %s", strings.Join(sets, ", "))
	} else {
		fmt.Fprintf(&b, " ON CONFLICT (%s) DO UPDATE SET %s", strings.Join(key, ", "), strings.Join(sets, ", "))
	}
	return b.String()
}

// noPad returns d for a MySQL server with the collation its tables use:
// utf8mb4_bin, MySQL's usual bytewise one, is PAD SPACE ("a" = "a  ",
// so two clusters or job names differing in trailing spaces would be one
// key, and -n "a" would select "a  "); MariaDB's utf8mb4_nopad_bin and
// MySQL 8's utf8mb4_0900_bin are not.
func noPad(ctx context.Context, db *sql.DB, d *dialect) (*dialect, error) {
	var name string
	err := db.QueryRowContext(ctx, "SELECT COLLATION_NAME FROM information_schema.COLLATIONS"+
		" WHERE COLLATION_NAME IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin') ORDER BY COLLATION_NAME DESC LIMIT 1").Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return d, nil // MySQL 5.7: PAD SPACE it is
	}
	if err != nil {
		return nil, err
	}
	c := *d
	c.collation = name
	return &c, nil
}
