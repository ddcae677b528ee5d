package slurmconf

import (
	"strings"
	"testing"
)

func TestParseDbd(t *testing.T) {
	c, err := ParseDbd(strings.NewReader(`# shared accounting
DbdHost=acct1
DbdPort=7031
AuthType=auth/munge
StorageType=accounting_storage/mysql
StorageHost=db.example
StoragePort=3307
StorageUser=slurm
StoragePass=secret
StorageLoc=slurm_acct_db
Frobnicate=1
`), "slurmdbd.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := Accounting{Type: "mysql", Host: "db.example", Port: 3307, User: "slurm", Pass: "secret", Loc: "slurm_acct_db"}
	if c.DbdHost != "acct1" || c.DbdPort != 7031 || c.Storage.Type != want.Type || c.Storage.Host != want.Host ||
		c.Storage.Port != want.Port || c.Storage.User != want.User || c.Storage.Pass != want.Pass || c.Storage.Loc != want.Loc {
		t.Fatalf("parsed %+v", c)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "slurmdbd.conf:11") {
		t.Fatalf("warnings %v", c.Warnings)
	}
	d, err := ParseDbd(strings.NewReader("DroverStateDir=/srv/dbd\n"), "x")
	if err != nil || d.Storage.Type != "sqlite" || d.Storage.Loc != "/srv/dbd/accounting.db" || d.DbdPort != DefaultDbdPort {
		t.Fatalf("defaults %+v %v", d, err)
	}
	for _, bad := range []string{"DbdPort=0\n", "StorageType=accounting_storage/none\n", "DroverStateDir=rel\n"} {
		if _, err := ParseDbd(strings.NewReader(bad), "f"); err == nil || !strings.Contains(err.Error(), "f:1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
