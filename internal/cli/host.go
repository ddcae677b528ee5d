package cli

import (
	"os"
	"os/user"

	"github.com/drover-hpc/drover/internal/nss"
)

// Host is what commands ask the operating system: who the caller is, the
// names of users and groups, and the address compute nodes dial back to.
// Commands read it through Env's methods, never from globals, so a test
// fakes it on the Env it builds. A nil Host, or a nil field, means the
// real one: Env literals that fake nothing keep working.
type Host struct {
	Getuid        func() int
	CurrentUser   func() (*user.User, error)
	LookupUser    func(login string) (*user.User, error)
	LookupUserID  func(uid string) (*user.User, error)
	LookupGroupID func(gid string) (*user.Group, error)
	// LaunchHost is the address nodes use to reach this command (srun's
	// I/O and PMI, sbcast's data); "" means loopback.
	LaunchHost string
}

// OSHost is the real operating system; LaunchHost is left to the caller,
// which knows whether the command needs one (finding it reads slurm.conf).
func OSHost() *Host {
	return &Host{
		Getuid: os.Getuid, CurrentUser: nss.Current, LookupUser: nss.Lookup,
		LookupUserID: nss.LookupId, LookupGroupID: nss.LookupGroupId,
	}
}

func (e *Env) host() *Host {
	if e == nil || e.Host == nil {
		return &Host{}
	}
	return e.Host
}

// Getuid is the caller's uid.
func (e *Env) Getuid() int {
	if f := e.host().Getuid; f != nil {
		return f()
	}
	return os.Getuid()
}

// CurrentUser is the caller's account.
func (e *Env) CurrentUser() (*user.User, error) {
	if f := e.host().CurrentUser; f != nil {
		return f()
	}
	return nss.Current()
}

// LookupUser finds an account by login name.
func (e *Env) LookupUser(login string) (*user.User, error) {
	if f := e.host().LookupUser; f != nil {
		return f(login)
	}
	return nss.Lookup(login)
}

// LookupUserID finds an account by uid (decimal).
func (e *Env) LookupUserID(uid string) (*user.User, error) {
	if f := e.host().LookupUserID; f != nil {
		return f(uid)
	}
	return nss.LookupId(uid)
}

// LookupGroupID finds a group by gid (decimal).
func (e *Env) LookupGroupID(gid string) (*user.Group, error) {
	if f := e.host().LookupGroupID; f != nil {
		return f(gid)
	}
	return nss.LookupGroupId(gid)
}

// LaunchHost is the address nodes dial to reach this command.
func (e *Env) LaunchHost() string {
	if h := e.host().LaunchHost; h != "" {
		return h
	}
	return "127.0.0.1"
}
