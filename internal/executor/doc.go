// Package executor runs one job step's program on a node, as the job's user,
// and reports how it ended.
//
// It owns the process side of a step: dropping root to the user's
// uid/gid/groups, the working directory, opening the step's
// stdin/stdout/stderr files with the user's rights (so that `-o /etc/passwd`
// cannot clobber anything the user could not clobber), exec'ing the program in
// its own process group, signalling that group, escalating to SIGKILL, and
// making sure no member of the group survives the step.
//
// # Two launch paths
//
// The agent runs as root. Start launches a program one of two ways, chosen
// by Spec.Helper; callers cannot tell them apart by the Result, the files or
// the messages, with the exceptions listed under the direct path.
//
// The direct path (the default) forks and execs the program from the agent
// itself. Before the fork, a goroutine locked to its OS thread takes the
// user's filesystem identity on that thread only (the raw, per-thread
// setgroups, setfsgid and setfsuid system calls; see withUserFS), checks
// that the user can search the working directory, opens the stdio files
// (close-on-exec, relative paths joined to Dir) and searches the program in
// the PATH of Env, then switches the thread back to root before unlocking it
// (a thread that cannot be switched back dies with its goroutine). The
// kernel checks every open, and owns every created file, as the user's;
// symlinks are followed with the user's rights. Then os.StartProcess
// forks: in the child, before execve, Go sets the groups, gid and uid
// (SysProcAttr.Credential) and then changes to Dir, so the chdir too is the
// user's. A launch failure (directory, file, user switch, PATH search,
// execve) becomes a Process whose Wait returns Result.Err and exit code 127,
// with the message written to the step's stderr, as the helper does. Why:
// the helper's cost is the start-up of a Go runtime (the agent's 20 MB
// binary) on every step: in BenchmarkStartWait, Start+Wait of /bin/true
// takes about 12 ms and 15 ms of CPU through the helper, against 2 ms
// of both directly, which is what a plain fork/exec of /bin/true from Go
// costs.
//
// What the direct path does not do, so that a spec which needs it must set
// Helper:
//   - Umask: the umask belongs to the process; the agent cannot set one
//     for a child between fork and exec, and changing its own would race
//     with every other goroutine. Start sends a spec whose Umask differs
//     from the agent's through the helper by itself.
//   - PidEnv: the program's pid is not known before the fork, and Env is
//     passed as it is.
//   - Code as root in the step before the user's (joinCgroups: joining
//     cgroup v1 hierarchies before the first instruction of the user's).
//
// Other differences: Pid is 0 when the launch failed before the fork (there
// was never a process); FIFOs named as stdio files, which block until the
// other end opens, are handed to the helper path rather than blocking
// Start; a stdio file on a hung network filesystem blocks Start itself,
// not the helper; and the open keeps root's capabilities other than the
// filesystem ones (CAP_SYS_RESOURCE: an inode quota does not stop the
// output file's creation). Outside Linux there is no per-thread identity,
// and steps of another user always go through the helper.
//
// The helper path (Spec.Helper) re-executes the agent's own binary
// (SelfPath, /proc/self/exe by default on Linux) with argv[1] ==
// StepExecArg. That helper (StepExecMain) reads the spec as JSON from an
// inherited pipe, joins the step's cgroups (a hook, see joinCgroups), drops
// privileges for good, sets the umask, changes directory, opens the stdio
// files as the user and finally execve's the program, so the program's pid
// is the helper's pid (which is how PidEnv works). A launch failure is
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
// On both paths the program gets fds 0-2 only: the first Start marks the
// descriptors the agent inherited from its own parent close-on-exec
// (sealInheritedFDs). After the program is reaped, Wait SIGKILLs its process
// group; when nothing is left in it, that is a single kill(2) that fails
// with ESRCH, and only real leftovers cost a scan of /proc.
//
// It does not own: job environment (package stepenv), filename patterns
// (stepenv), cgroup limits and accounting (package cgroups), GPU binding,
// containers, prolog/epilog, or any knowledge of jobs and the controller. It
// knows processes and files only.
//
// Cgroups: a spec naming CgroupV1Dirs/CgroupV2Dir starts the program
// inside those groups before its first instruction. On the direct path a
// goroutine locked to a fresh OS thread moves that thread into the v1
// groups (package cgroups, EnterThread), forks, and moves it back; a child
// inherits the cgroups of the thread that forked it. On v2 the kernel
// places the child (CLONE_INTO_CGROUP). The helper path joins the groups
// in the helper, still root. A process that calls setsid(2) leaves the
// step's process group but not its cgroup: the agent kills the cgroup at
// the end of the job (package cgroups, Group.Kill).
//
// Executor is the seam its callers launch through: Local (Start here), the
// Supervisor for programs that outlive the agent, and executor/fake, which
// runs nothing and lets tests end each "program" as they choose.
package executor
