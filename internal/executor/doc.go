// Package executor runs one job step's program on a node, as the job's user,
// and reports how it ended.
//
// It owns the process side of a step: dropping root to the user's
// uid/gid/groups, the umask, the working directory, opening the step's
// stdin/stdout/stderr files with the user's rights (so that `-o /etc/passwd`
// cannot clobber anything the user could not clobber), exec'ing the program in
// its own process group, signalling that group, escalating to SIGKILL, and
// making sure no member of the group survives the step.
//
// How: the agent runs as root. Start re-executes the agent's own binary
// (SelfPath, /proc/self/exe by default on Linux) with argv[1] == StepExecArg. That
// helper (StepExecMain) reads the spec as JSON from an inherited pipe, joins
// the step's cgroups (a hook, see joinCgroups), drops privileges, changes
// directory, opens the stdio files as the user and finally execve's the
// program, so the program's pid is the helper's pid. A launch failure is
// written to a close-on-exec status pipe before the helper exits 127; a
// successful execve closes that pipe empty. That is how Wait tells "could not
// launch" (Result.Err) from "the script exited 127".
//
// The binary that embeds this package must dispatch early in main:
//
//	if len(os.Args) > 1 && os.Args[1] == executor.StepExecArg {
//		os.Exit(executor.StepExecMain(os.Args[2:]))
//	}
//
// It does not own: job environment (package stepenv), filename patterns
// (stepenv), cgroup limits and accounting (package cgroups), GPU binding,
// containers, prolog/epilog, or any knowledge of jobs and the controller. It
// knows processes and files only.
//
// Known gap until the cgroup work lands: a process that calls setsid(2) (or
// setpgid to another group) leaves the step's process group and escapes both
// Signal and the final SIGKILL sweep of Wait. Cgroups will close that hole;
// the hook point is joinCgroups in stepexec_unix.go.
package executor
