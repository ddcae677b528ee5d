package nss

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"testing"
)

// fake makes this build behave as one without cgo, with nsswitch.conf
// holding conf and getent answering from answers (db+" "+key → line).
func fake(t *testing.T, conf string, answers map[string]string) *[]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nsswitch.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls []string
	oldLibc, oldPath, oldGetent := viaLibc, nsswitchPath, getent
	viaLibc, nsswitchPath = false, path
	getent = func(db, key string) ([]byte, error) {
		calls = append(calls, db+" "+key)
		if line, ok := answers[db+" "+key]; ok {
			return []byte(line + "\n"), nil
		}
		return nil, errors.New("exit status 2")
	}
	t.Cleanup(func() {
		viaLibc, nsswitchPath, getent = oldLibc, oldPath, oldGetent
		asked.Lock()
		asked.lines = nil
		asked.Unlock()
	})
	return &calls
}

const missing = "drover-nss-no-such-account"

func TestLDAPAccountFoundThroughGetent(t *testing.T) {
	asked := fake(t, "passwd: files ldap\ngroup: files [SUCCESS=return] sss\n", map[string]string{
		"passwd " + missing: missing + ":x:70001:70002:Ann Other,room 1:/home/ann:/bin/bash",
		"passwd 70001":      missing + ":x:70001:70002:Ann Other:/home/ann:/bin/bash",
		"group " + missing:  missing + ":*:70002:ann",
		"group 70002":       missing + ":*:70002:",
	})
	u, err := Lookup(missing)
	if err != nil || u.Uid != "70001" || u.Gid != "70002" || u.Name != "Ann Other" || u.HomeDir != "/home/ann" {
		t.Fatalf("Lookup = %+v, %v", u, err)
	}
	if u, err := LookupId("70001"); err != nil || u.Username != missing {
		t.Fatalf("LookupId = %+v, %v", u, err)
	}
	if g, err := LookupGroup(missing); err != nil || g.Gid != "70002" {
		t.Fatalf("LookupGroup = %+v, %v", g, err)
	}
	if g, err := LookupGroupId("70002"); err != nil || g.Name != missing {
		t.Fatalf("LookupGroupId = %+v, %v", g, err)
	}
	if len(*asked) != 4 {
		t.Fatalf("getent asked %q, want the four misses", *asked)
	}
}

func TestFilesOnlyNeverRunsGetent(t *testing.T) {
	asked := fake(t, "# comment\npasswd:   files\ngroup: files\n", nil)
	_, err := Lookup(missing)
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		t.Fatalf("Lookup of a missing account: %v, want os/user's UnknownUserError", err)
	}
	if _, err := LookupGroupId("4000000001"); err == nil {
		t.Fatal("LookupGroupId of a missing group succeeded")
	}
	if len(*asked) != 0 {
		t.Fatalf("getent asked %q with files only", *asked)
	}
}

func TestGetentMissKeepsGoError(t *testing.T) {
	fake(t, "passwd: files sss\n", nil)
	_, err := LookupId("4000000001")
	var unknown user.UnknownUserIdError
	if !errors.As(err, &unknown) {
		t.Fatalf("LookupId: %v, want os/user's UnknownUserIdError", err)
	}
}

func TestFilesAnswerFirst(t *testing.T) {
	asked := fake(t, "passwd: files ldap\n", nil)
	u, err := LookupId("0")
	if err != nil || u.Username != "root" {
		t.Fatalf("LookupId(0) = %+v, %v", u, err)
	}
	if len(*asked) != 0 {
		t.Fatalf("getent asked %q for an account in /etc/passwd", *asked)
	}
}

func TestGetentAskedOncePerKey(t *testing.T) {
	calls := fake(t, "passwd: files ldap\n", map[string]string{
		"passwd 70001": missing + ":x:70001:70002::/home/ann:/bin/sh",
	})
	for range 3 {
		if u, err := LookupId("70001"); err != nil || u.Username != missing {
			t.Fatalf("LookupId = %+v, %v", u, err)
		}
		if _, err := LookupId("70009"); err == nil {
			t.Fatal("LookupId of an id getent does not know succeeded")
		}
	}
	if len(*calls) != 2 {
		t.Fatalf("getent asked %q; want each key once, misses remembered too", *calls)
	}
}
