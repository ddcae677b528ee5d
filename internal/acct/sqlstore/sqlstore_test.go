package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/accttest"
)

func openT(t *testing.T, c Config) *Store {
	t.Helper()
	st, err := Open(context.Background(), c)
	if err != nil {
		t.Fatalf("open %s: %v", c.Driver, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// reset empties a shared server's tables between subtests.
func reset(t *testing.T, st *Store) {
	t.Helper()
	for _, table := range []string{"steps", "jobs"} {
		if _, err := st.db.Exec("DELETE FROM " + table); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSQLite(t *testing.T) {
	accttest.Run(t, func(t *testing.T) acct.Store {
		return openT(t, Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "acct.db")})
	})
}

func TestMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := accttest.StartMariaDB(t)
	st := openT(t, Config{Driver: "mariadb", DSN: srv.DSN})
	accttest.Run(t, func(t *testing.T) acct.Store { reset(t, st); return noClose{st} })
	outage(t, srv, st)
}

func TestPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := accttest.StartPostgres(t)
	st := openT(t, Config{Driver: "postgresql", DSN: srv.DSN})
	accttest.Run(t, func(t *testing.T) acct.Store { reset(t, st); return noClose{st} })
	outage(t, srv, st)
}

// noClose shares one connection pool among the suite's subtests.
type noClose struct{ *Store }

func (noClose) Close() error { return nil }

// outage: with the server stopped every call fails with ErrUnavailable;
// started again, the same Store works without being reopened.
func outage(t *testing.T, srv *accttest.Server, st *Store) {
	t.Run("outage", func(t *testing.T) {
		reset(t, st)
		ctx := context.Background()
		srv.Stop()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		err := st.PutJobs(tctx, []*acct.Job{accttest.Job("c", 1, 10)})
		if !errors.Is(err, acct.ErrUnavailable) {
			t.Fatalf("PutJobs with the server down: %v (want ErrUnavailable)", err)
		}
		if _, err := st.Jobs(tctx, acct.Query{}); !errors.Is(err, acct.ErrUnavailable) {
			t.Errorf("Jobs with the server down: %v", err)
		}
		if err := st.Ping(tctx); !errors.Is(err, acct.ErrUnavailable) {
			t.Errorf("Ping with the server down: %v", err)
		}
		srv.Start()
		deadline := time.Now().Add(20 * time.Second)
		for {
			err = st.PutJobs(ctx, []*acct.Job{accttest.Job("c", 1, 10)})
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("PutJobs after restart: %v", err)
		}
		if got, err := st.Jobs(ctx, acct.Query{}); err != nil || len(got) != 1 {
			t.Fatalf("after restart: %v %d", err, len(got))
		}
	})
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "acct.db")
	st := openT(t, Config{Driver: "sqlite", DSN: file})
	if err := st.PutJobs(ctx, []*acct.Job{accttest.Job("c", 1, 10)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Two processes opening at once: each migration applies once.
	done := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := Open(ctx, Config{Driver: "sqlite", DSN: file})
			if err == nil {
				s.Close()
			}
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	st = openT(t, Config{Driver: "sqlite", DSN: file})
	var n, v int
	if err := st.db.QueryRow("SELECT COUNT(*), MAX(version) FROM schema_version").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion || v != SchemaVersion {
		t.Errorf("schema_version: %d rows, version %d; want %d", n, v, SchemaVersion)
	}
	if got, err := st.Jobs(ctx, acct.Query{}); err != nil || len(got) != 1 {
		t.Errorf("records after reopening: %v %d", err, len(got))
	}
	// A database from a newer Drover is refused, not damaged.
	if _, err := st.db.Exec("INSERT INTO schema_version (version) VALUES (999)"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := Open(ctx, Config{Driver: "sqlite", DSN: file}); err == nil || !strings.Contains(err.Error(), "upgrade Drover") {
		t.Errorf("newer schema: %v", err)
	}
}

func TestDSN(t *testing.T) {
	for _, tc := range []struct {
		driver, host string
		port         int
		user, pass   string
		loc, want    string
	}{
		{"mysql", "db1", 0, "slurm", "pw", "", "slurm:pw@tcp(db1:3306)/drover_acct_db"},
		{"mariadb", "", 3307, "u", "", "acct", "u@tcp(localhost:3307)/acct"},
		{"postgres", "pg", 0, "slurm", "p@ss", "acct", "postgres://slurm:p%40ss@pg:5432/acct?sslmode=prefer&connect_timeout=5"},
		{"sqlite", "", 0, "", "", "/var/lib/x.db", "/var/lib/x.db"},
		{"oracle", "", 0, "", "", "", ""},
	} {
		if got := DSN(tc.driver, tc.host, tc.port, tc.user, tc.pass, tc.loc); got != tc.want {
			t.Errorf("DSN(%s): %q, want %q", tc.driver, got, tc.want)
		}
	}
	if _, err := Open(context.Background(), Config{Driver: "oracle"}); err == nil {
		t.Error("unknown driver accepted")
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []Config{
		{Driver: "mysql", DSN: DSN("mysql", "127.0.0.1", 1, "u", "p", "")},
		{Driver: "postgres", DSN: DSN("postgres", "127.0.0.1", 1, "u", "p", "")},
	} {
		if _, err := Open(ctx, c); !errors.Is(err, acct.ErrUnavailable) {
			t.Errorf("%s on a closed port: %v", c.Driver, err)
		}
	}
	// A file that cannot be created is not "unavailable": it is wrong.
	if _, err := Open(ctx, Config{Driver: "sqlite", DSN: "/nonexistent/dir/acct.db"}); err == nil || errors.Is(err, acct.ErrUnavailable) {
		t.Errorf("sqlite in a missing directory: %v", err)
	}
}

var _ = sql.ErrNoRows
