package accttest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// Server is a database server a test started: private data directory,
// port on 127.0.0.1, stopped and removed at the test's end.
type Server struct {
	Driver string // "mysql" or "postgres"
	DSN    string // for database/sql (and sqlstore.Config)
	Host   string
	Port   int
	User   string
	Pass   string
	DB     string

	tb    testing.TB
	dir   string
	start func() *exec.Cmd
	cmd   *exec.Cmd
	done  chan struct{}
	log   *logBuf
}

// logBuf collects a server's output (written by exec's copying
// goroutine, read when a test fails).
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// missing skips the test when a server's binaries are not installed,
// unless DROVER_REQUIRE_DBS is set (CI), where it fails.
func missing(tb testing.TB, what string, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("DROVER_REQUIRE_DBS") != "" {
				tb.Fatalf("%s is not installed (%s) and DROVER_REQUIRE_DBS is set", what, p)
			}
			tb.Skipf("%s is not installed (%s)", what, p)
		}
	}
	if os.Getuid() != 0 {
		if os.Getenv("DROVER_REQUIRE_DBS") != "" {
			tb.Fatalf("starting %s needs root", what)
		}
		tb.Skipf("starting %s needs root", what)
	}
}

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func run(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

// StartMariaDB starts mariadbd with a database "drover" and a user with
// a password for it.
func StartMariaDB(tb testing.TB) *Server {
	tb.Helper()
	const daemon = "/usr/sbin/mariadbd"
	missing(tb, "MariaDB", daemon, "/usr/bin/mariadb-install-db", "/usr/bin/mariadb")
	dir, err := os.MkdirTemp("", "drover-mariadb-")
	if err != nil {
		tb.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	run(tb, exec.Command("/usr/bin/mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root",
		"--auth-root-authentication-method=socket", "--skip-test-db"))
	s := &Server{Driver: "mysql", Host: "127.0.0.1", Port: freePort(tb), User: "drover", Pass: "s3cret-pw", DB: "drover",
		tb: tb, dir: dir, log: &logBuf{}}
	sock := filepath.Join(dir, "mysqld.sock")
	s.start = func() *exec.Cmd {
		return exec.Command(daemon, "--no-defaults", "--datadir="+data, "--port="+strconv.Itoa(s.Port),
			"--bind-address=127.0.0.1", "--socket="+sock, "--user=root", "--skip-log-bin",
			"--pid-file="+filepath.Join(dir, "mysqld.pid"), "--innodb-buffer-pool-size=32M",
			"--innodb-log-file-size=16M", "--skip-name-resolve")
	}
	tb.Cleanup(s.Close)
	s.Start()
	// Root logs in through the socket as the OS user root.
	run(tb, exec.Command("/usr/bin/mariadb", "--no-defaults", "--socket="+sock, "-uroot", "-e",
		fmt.Sprintf("CREATE DATABASE %s; CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'; GRANT ALL ON %s.* TO '%s'@'127.0.0.1';",
			s.DB, s.User, s.Pass, s.DB, s.User)))
	s.DSN = fmt.Sprintf("%s:%s@tcp(127.0.0.1:%d)/%s", s.User, s.Pass, s.Port, s.DB)
	s.waitReady("mysql", s.DSN)
	return s
}

// StartPostgres starts PostgreSQL 15 as the OS user postgres, trusting
// local TCP connections, with a database "drover".
func StartPostgres(tb testing.TB) *Server {
	tb.Helper()
	bin := "/usr/lib/postgresql/15/bin"
	missing(tb, "PostgreSQL 15", bin+"/initdb", bin+"/postgres")
	pg, err := user.Lookup("postgres")
	if err != nil {
		if os.Getenv("DROVER_REQUIRE_DBS") != "" {
			tb.Fatalf("no postgres user: %v", err)
		}
		tb.Skipf("no postgres user: %v", err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	asPG := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
		cmd.Dir = "/"
		return cmd
	}
	dir, err := os.MkdirTemp("", "drover-postgres-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		tb.Fatal(err)
	}
	_ = os.Chmod(dir, 0o700)
	data := filepath.Join(dir, "data")
	run(tb, asPG(exec.Command(bin+"/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")))
	s := &Server{Driver: "postgres", Host: "127.0.0.1", Port: freePort(tb), User: "postgres", DB: "drover",
		tb: tb, dir: dir, log: &logBuf{}}
	s.start = func() *exec.Cmd {
		return asPG(exec.Command(bin+"/postgres", "-D", data, "-p", strconv.Itoa(s.Port), "-h", "127.0.0.1",
			"-k", dir, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"))
	}
	tb.Cleanup(s.Close)
	s.Start()
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
	s.waitReady("pgx", admin)
	db, err := sql.Open("pgx", admin)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec("CREATE DATABASE drover"); err != nil {
		tb.Fatal(err)
	}
	db.Close()
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/drover?sslmode=disable", s.Port)
	return s
}

// Start starts the server (again) on its port and data, and waits until
// its port accepts connections.
func (s *Server) Start() {
	s.tb.Helper()
	if s.cmd != nil {
		return
	}
	cmd := s.start()
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("start %s: %v", s.Driver, err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			s.tb.Fatalf("%s exited at start:\n%s", s.Driver, s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("%s did not listen on %d in 30 s:\n%s", s.Driver, s.Port, s.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (fast shutdown), keeping its data.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	// SIGTERM is a clean shutdown for both; SIGINT is PostgreSQL's fast
	// one (it disconnects clients instead of waiting for them).
	sig := syscall.SIGTERM
	if s.Driver == "postgres" {
		sig = syscall.SIGINT
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Close stops the server and removes its files.
func (s *Server) Close() {
	s.Stop()
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
		s.dir = ""
	}
}

func (s *Server) waitReady(driver, dsn string) {
	s.tb.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		s.tb.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("%s not ready: %v\n%s", s.Driver, err, s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
