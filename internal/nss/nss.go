package nss

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
)

// Lookup finds a user by login name.
func Lookup(name string) (*user.User, error) {
	u, err := user.Lookup(name)
	if err == nil || !missed(err) {
		return u, err
	}
	return userFromGetent("passwd", name, err)
}

// LookupId finds a user by uid (decimal).
func LookupId(uid string) (*user.User, error) {
	u, err := user.LookupId(uid)
	if err == nil || !missed(err) {
		return u, err
	}
	return userFromGetent("passwd", uid, err)
}

// LookupGroup finds a group by name.
func LookupGroup(name string) (*user.Group, error) {
	g, err := user.LookupGroup(name)
	if err == nil || !missed(err) {
		return g, err
	}
	return groupFromGetent(name, err)
}

// LookupGroupId finds a group by gid (decimal).
func LookupGroupId(gid string) (*user.Group, error) {
	g, err := user.LookupGroupId(gid)
	if err == nil || !missed(err) {
		return g, err
	}
	return groupFromGetent(gid, err)
}

// Current is the caller's account. Without cgo, Go's user.Current falls
// back to $USER for a uid missing from /etc/passwd; the name service is
// asked first, so the name is the account's, as the C library gives it.
func Current() (*user.User, error) {
	if !viaLibc {
		if u, err := LookupId(strconv.Itoa(os.Getuid())); err == nil {
			return u, nil
		}
	}
	return user.Current()
}

// missed reports whether err is "no such entry" from Go's own file
// lookups, the case the C library's other sources may still answer.
func missed(err error) bool {
	if viaLibc {
		return false
	}
	var (
		un  user.UnknownUserError
		uid user.UnknownUserIdError
		gn  user.UnknownGroupError
		gid user.UnknownGroupIdError
	)
	return errors.As(err, &un) || errors.As(err, &uid) || errors.As(err, &gn) || errors.As(err, &gid)
}

// Seams for tests: whether os/user asks the C library, the switch's
// configuration and getent.
var (
	viaLibc      = libcBuild
	nsswitchPath = "/etc/nsswitch.conf"
	getent       = func(db, key string) ([]byte, error) {
		return exec.Command("getent", db, key).Output()
	}
)

// beyondFiles reports whether nsswitch.conf names a source other than
// the files Go has already read for db ("passwd" or "group"). Without the
// file there is nothing else to ask.
func beyondFiles(db string) bool {
	f, err := os.Open(nsswitchPath)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != db {
			continue
		}
		for _, src := range strings.Fields(v) {
			if src != "files" && !strings.HasPrefix(src, "[") {
				return true
			}
		}
		return false
	}
	return false
}

// asked remembers getent's answers, misses too: a listing names the same
// few accounts over and over, and each question is a process.
var asked struct {
	sync.Mutex
	lines map[string][]string
}

// entry asks getent for db's line with key, split on ':'; nil when the
// switch has no other source or getent has no answer.
func entry(db, key string, fields int) []string {
	if !beyondFiles(db) {
		return nil
	}
	asked.Lock()
	defer asked.Unlock()
	if f, ok := asked.lines[db+":"+key]; ok {
		return f
	}
	var f []string
	if out, err := getent(db, key); err == nil {
		line, _, _ := bytes.Cut(out, []byte("\n"))
		if f = strings.Split(string(line), ":"); len(f) < fields {
			f = nil
		}
	}
	if asked.lines == nil {
		asked.lines = map[string][]string{}
	}
	asked.lines[db+":"+key] = f
	return f
}

func userFromGetent(db, key string, miss error) (*user.User, error) {
	// name:password:uid:gid:gecos:home:shell
	f := entry(db, key, 7)
	if f == nil {
		return nil, miss
	}
	name, _, _ := strings.Cut(f[4], ",")
	return &user.User{Username: f[0], Uid: f[2], Gid: f[3], Name: name, HomeDir: f[5]}, nil
}

func groupFromGetent(key string, miss error) (*user.Group, error) {
	// name:password:gid:members
	f := entry("group", key, 3)
	if f == nil {
		return nil, miss
	}
	return &user.Group{Name: f[0], Gid: f[2]}, nil
}
