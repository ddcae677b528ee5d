// Package archtest holds only tests: they enforce the import rules of
// DESIGN.md so the package boundaries cannot erode silently, and two
// seams of the controller: time is read and awaited only through
// internal/clock (controller, service, sched), and the leader-only loops
// are started in one place (controller/leader.go). Tests of the commands
// fake the operating system through cli.Env, never by swapping globals.
package archtest
