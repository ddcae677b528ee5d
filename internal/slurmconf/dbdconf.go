package slurmconf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DbdConf is slurmdbd.conf: where `drover dbd` listens and which database
// it keeps the accounting of several clusters in.
type DbdConf struct {
	File    string
	DbdHost string // the host the dbd runs on (informational)
	DbdAddr string // the address it listens on; "" = every address
	DbdPort int
	// StateDir holds the dbd's CA and key (Drover's; default
	// /var/lib/drover/dbd).
	StateDir string
	// Storage is the database, as AccountingStorage* in slurm.conf: Type
	// is "sqlite", "mysql" or "postgres".
	Storage Accounting
	// MessageTimeout bounds a new connection's handshake and its first
	// call (seconds; slurmdbd.conf's MessageTimeout, 10 by default).
	MessageTimeout int

	Warnings []string
}

// DefaultDbdPort is slurmdbd's port.
const DefaultDbdPort = 6819

// dbdKeys are slurmdbd.conf keys Slurm knows that Drover reads or accepts.
var dbdKeys = map[string]bool{
	"archivedir": true, "archiveevents": true, "archivejobs": true, "archiveresvs": true,
	"archivescript": true, "archivesteps": true, "archivesuspend": true, "archivetxn": true,
	"archiveusage": true, "authinfo": true, "authtype": true, "authalttypes": true,
	"commitdelay": true, "debuglevel": true, "debugflags": true, "defaultqos": true,
	"logfile": true, "logtimeformat": true, "maxquerytimerange": true, "messagetimeout": true,
	"parameters": true, "pidfile": true, "privatedata": true, "purgeeventafter": true,
	"purgejobafter": true, "purgeresvafter": true, "purgestepafter": true, "purgesuspendafter": true,
	"purgetxnafter": true, "purgeusageafter": true, "slurmuser": true, "trackslurmctlddown": true,
	"trackwckey": true, "storagebackuphost": true, "storageparameters": true, "tcptimeout": true,
	"dbdbackuphost": true,
}

// LoadDbd reads slurmdbd.conf; a missing file gives the defaults (an
// SQLite database in the state directory).
func LoadDbd(path string) (*DbdConf, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return ParseDbd(strings.NewReader(""), path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseDbd(f, path)
}

// ParseDbd parses slurmdbd.conf text; errors name file and line.
func ParseDbd(r io.Reader, name string) (*DbdConf, error) {
	c := &DbdConf{File: name, DbdPort: DefaultDbdPort, StateDir: "/var/lib/drover/dbd",
		Storage: Accounting{Type: "sqlite"}, MessageTimeout: 10}
	err := readConf(r, name, nil, func(file string, l logicalLine) error {
		pairs, err := splitPairs(l.text)
		if err != nil {
			return perr(file, l.num, err.Error())
		}
		for _, kv := range pairs {
			if err := c.set(Pos{file, l.num}, kv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Storage.Type == "sqlite" && c.Storage.Loc == "" {
		c.Storage.Loc = filepath.Join(c.StateDir, "accounting.db")
	}
	return c, nil
}

func (c *DbdConf) set(pos Pos, kv pair) error {
	bad := func(want string) error {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s %q: want %s", kv.key, kv.value, want))
	}
	v := kv.value
	switch key := strings.ToLower(kv.key); key {
	case "dbdhost":
		c.DbdHost = v
	case "dbdaddr":
		c.DbdAddr = v
	case "dbdport":
		n, err := parseInt(v, 1, 65535)
		if err != nil {
			return bad("a port")
		}
		c.DbdPort = int(n)
	case "droverstatedir":
		if !strings.HasPrefix(v, "/") {
			return bad("an absolute path")
		}
		c.StateDir = v
	case "storagetype":
		t, ok := accountingTypes[strings.TrimPrefix(strings.ToLower(v), "accounting_storage/")]
		if !ok || t == "none" || t == "slurmdbd" {
			return bad("accounting_storage/ followed by sqlite, mysql or postgres")
		}
		c.Storage.Type = t
	case "storagehost":
		c.Storage.Host = v
	case "storageport":
		n, err := parseInt(v, 1, 65535)
		if err != nil {
			return bad("a port")
		}
		c.Storage.Port = int(n)
	case "storageuser":
		c.Storage.User = v
	case "storagepass":
		c.Storage.Pass = v
	case "storageloc":
		c.Storage.Loc = v
	case "messagetimeout":
		n, err := parseInt(v, 1, 3600)
		if err != nil {
			return bad("seconds from 1 to 3600")
		}
		c.MessageTimeout = int(n)
	default:
		if !dbdKeys[key] {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: unknown key %q ignored", pos, kv.key))
		}
	}
	return nil
}
