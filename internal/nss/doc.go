// Package nss looks users and groups up the way the C library does, in
// binaries built with or without cgo.
//
// The Slurm commands' binary (cmd/drover-cli) is built without cgo: a
// static binary starts about 0.7 ms sooner than one that loads the C
// library, and every command pays that. Go's own lookups read only
// /etc/passwd and /etc/group, so on a cluster whose accounts come from
// LDAP or SSSD (nsswitch.conf's other sources) a miss there is asked of
// getent(1), which goes through the C library's name service switch. A
// binary built with cgo (the daemons) asks the C library directly and
// never runs getent.
package nss
