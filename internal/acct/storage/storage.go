package storage

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/remote"
	"github.com/drover-hpc/drover/internal/acct/sqlstore"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// DefaultFile is the embedded database's file in the state directory.
const DefaultFile = "accounting.db"

// Open returns the store a's settings name, or nil when accounting is off
// (AccountingStorageType=none). stateDir holds the embedded database
// unless AccountingStorageLoc names another file.
//
// The embedded database is opened at once: a file that cannot be opened
// is a configuration error the admin must see at start. A database
// server or a dbd is opened on first use instead, so the controller
// starts and schedules while it is down and the outbox keeps the records.
func Open(ctx context.Context, a slurmconf.Accounting, stateDir string, log *slog.Logger) (acct.Store, error) {
	switch a.Type {
	case "none":
		return nil, nil
	case "", "sqlite":
		return openSQLite(ctx, a.Loc, stateDir)
	case "slurmdbd":
		if a.Host == "" {
			// Slurm's usual setting with no dbd host given: keep the
			// records locally rather than nowhere.
			if log != nil {
				log.Warn("AccountingStorageType=slurmdbd without AccountingStorageHost: using the embedded database")
			}
			return openSQLite(ctx, "", stateDir)
		}
		key, err := remote.ParseKey(a.Pass)
		if err != nil {
			return nil, fmt.Errorf("AccountingStoragePass: %w (it must hold the key the dbd wrote to dbd.key)", err)
		}
		port := a.Port
		if port == 0 {
			port = slurmconf.DefaultDbdPort
		}
		addr := net.JoinHostPort(a.Host, strconv.Itoa(port))
		return acct.Lazy(func(context.Context) (acct.Store, error) {
			return remote.Dial(addr, key)
		}), nil
	case "mysql", "postgres":
		dsn := sqlstore.DSN(a.Type, a.Host, a.Port, a.User, a.Pass, a.Loc)
		return acct.Lazy(func(ctx context.Context) (acct.Store, error) {
			return sqlstore.Open(ctx, sqlstore.Config{Driver: a.Type, DSN: dsn})
		}), nil
	}
	return nil, fmt.Errorf("AccountingStorageType=%s is not supported", a.Type)
}

func openSQLite(ctx context.Context, loc, stateDir string) (acct.Store, error) {
	if loc == "" {
		loc = filepath.Join(stateDir, DefaultFile)
	}
	if err := os.MkdirAll(filepath.Dir(loc), 0o755); err != nil {
		return nil, fmt.Errorf("accounting database: %w", err)
	}
	st, err := sqlstore.Open(ctx, sqlstore.Config{Driver: "sqlite", DSN: loc})
	if err != nil {
		return nil, fmt.Errorf("accounting database %s: %w", loc, err)
	}
	return st, nil
}
