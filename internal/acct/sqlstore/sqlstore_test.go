package sqlstore

import (
	"context"
	"errors"
	"fmt"
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
	serverSuite(t, srv, Config{Driver: "mariadb", DSN: srv.DSN})
}

func TestPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := accttest.StartPostgres(t)
	serverSuite(t, srv, Config{Driver: "postgresql", DSN: srv.DSN})
}

// serverSuite runs the conformance suite on a server, each subtest with
// its own Store over emptied tables, then the tests that need a server.
func serverSuite(t *testing.T, srv *accttest.Server, c Config) {
	accttest.Run(t, func(t *testing.T) acct.Store {
		st := openT(t, c)
		reset(t, st)
		return st
	})
	st := openT(t, c)
	reopen(t, c, st)
	upgradeFrom1(t, c, st)
	outage(t, srv, st)
}

// upgradeFrom1 puts the schema back as migration 1 made it before
// migration 2 existed, and checks that opening upgrades it in place.
func upgradeFrom1(t *testing.T, c Config, st *Store) {
	t.Run("upgrade from schema 1", func(t *testing.T) {
		reset(t, st)
		ctx := context.Background()
		old := accttest.Job("c", 1, 10)
		for _, s := range old.Steps {
			s.Suspended = 0 // its column is dropped below, as schema 1 had none
		}
		if err := st.PutJobs(ctx, []*acct.Job{old}); err != nil {
			t.Fatal(err)
		}
		var setup []string
		cols := "SELECT column_name, data_type, COALESCE(collation_name, '') FROM information_schema.columns" +
			" WHERE table_name = 'jobs' AND column_name IN ('cluster', 'name', 'submit_line')"
		want := map[string]string{}
		if st.d.name == "mysql" {
			for _, tb := range []string{"jobs", "steps"} {
				setup = append(setup, "ALTER TABLE "+tb+" CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
			}
			setup = append(setup, "ALTER TABLE jobs MODIFY name VARCHAR(191) NOT NULL DEFAULT '', MODIFY submit_line TEXT NOT NULL")
			cols += " AND table_schema = DATABASE()"
			want["cluster"] = "varchar " + st.d.collation
			want["name"] = "mediumtext " + st.d.collation
			want["submit_line"] = "mediumtext " + st.d.collation
		} else {
			for _, tb := range []string{"jobs", "steps"} {
				setup = append(setup, "ALTER TABLE "+tb+` ALTER COLUMN cluster TYPE TEXT COLLATE "default"`)
			}
			cols += " AND table_schema = current_schema()"
			want["cluster"], want["name"], want["submit_line"] = "text C", "text ", "text "
		}
		setup = append(setup, "ALTER TABLE jobs DROP COLUMN runs")       // added by migration 3
		setup = append(setup, "ALTER TABLE steps DROP COLUMN suspended") // added by migration 4
		setup = append(setup, "DELETE FROM schema_version WHERE version > 1")
		for _, q := range setup {
			if _, err := st.db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		st2 := openT(t, c)
		checkVersions(t, st2)
		rows, err := st2.db.Query(cols)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for rows.Next() {
			var name, typ, coll string
			if err := rows.Scan(&name, &typ, &coll); err != nil {
				t.Fatal(err)
			}
			got[strings.ToLower(name)] = strings.ToLower(typ) + " " + coll
		}
		rows.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("columns after the upgrade: %v, want %v", got, want)
		}
		long := accttest.Job("c", 2, 10)
		long.Name = strings.Repeat("x", 500)
		if err := st2.PutJobs(ctx, []*acct.Job{long}); err != nil {
			t.Fatalf("a long name after the upgrade: %v", err)
		}
		if got, err := st2.Jobs(ctx, acct.Query{}); err != nil || len(got) != 2 || accttest.Diff(got[0], old) != "" {
			t.Errorf("records after the upgrade: %v %d", err, len(got))
		}
	})
}

// reopen: stores opened at once on a database migrate it once, and keep
// what it holds.
func reopen(t *testing.T, c Config, st *Store) {
	t.Run("reopen", func(t *testing.T) {
		reset(t, st)
		ctx := context.Background()
		if err := st.PutJobs(ctx, []*acct.Job{accttest.Job("c", 1, 10)}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 3)
		for range 3 {
			go func() {
				s, err := Open(ctx, c)
				if err == nil {
					err = s.Close()
				}
				done <- err
			}()
		}
		for range 3 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		checkVersions(t, st)
		if got, err := st.Jobs(ctx, acct.Query{}); err != nil || len(got) != 1 {
			t.Errorf("records after reopening: %v %d", err, len(got))
		}
	})
}

// checkVersions: schema_version has one row per migration.
func checkVersions(t *testing.T, st *Store) {
	t.Helper()
	var n, v int
	if err := st.db.QueryRow("SELECT COUNT(*), MAX(version) FROM schema_version").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion || v != SchemaVersion {
		t.Errorf("schema_version: %d rows, version %d; want %d", n, v, SchemaVersion)
	}
}

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
	checkVersions(t, st)
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

func TestUnpack(t *testing.T) {
	cols := []column[stepRow]{stepCols[0], stepCols[1], stepCols[3]} // cluster, job_id, name
	sc := newScanner(dialects["sqlite"], cols)
	var r stepRow
	if err := sc.unpack("2:c1-9223372036854775808,5:a:b,c", &r); err != nil || r.cluster != "c1" || r.Name != "a:b,c" {
		t.Errorf("unpack: %v %+v", err, r)
	}
	for _, bad := range []string{"", "2:c1", "2:c1x,1:n", "3:c1", "2:c1,1:nn", "2:c1-,1:n", "2:c199999999999999999999,1:n", "-1:c1,1:n"} {
		if err := sc.unpack(bad, &r); err == nil {
			t.Errorf("unpack(%q) accepted", bad)
		}
	}
}
