package srun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/bcast"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
)

// bcastExecutable is srun --bcast[=DEST]: the program is copied to every
// node of the job (replacing what is there, mode 0700) before the step is
// created, and the step runs the copy. It returns the copy's path, or
// false once it has printed why the step is not launched.
//
// Where the copy goes: DEST when it names a file (a relative one is taken
// from the step's working directory); DEST/<name> when DEST ends in '/';
// <working directory>/<name> without DEST. Slurm's <name> is
// slurm_bcast_<job>.<step>_<node>, but Drover writes one path on every
// node and the step id is not known before the copy, so <name> is
// slurm_bcast_<job>_<program>: one per job and program.
func bcastExecutable(ctx context.Context, env *cli.Env, c cli.Client, opts *jobspec.Options, id model.JobID) (string, bool) {
	js := opts.Spec
	if opts.MultiProg {
		env.Errorf("--bcast can not be used with --multi-prog")
		return "", false
	}
	prog := findProgram(js.Argv[0], js.WorkDir, env.Getenv("PATH"))
	if prog == "" {
		env.Errorf("Can not execute %s", js.Argv[0])
		return "", false
	}
	data, err := os.ReadFile(prog)
	if err != nil {
		env.Errorf("Can't open `%s`: %v", prog, unwrapPath(err))
		return "", false
	}
	dest := bcastDest(opts.Bcast, js.WorkDir, id, prog)
	failures, err := bcast.Send(ctx, c, bcast.File{
		Job: id, LaunchHost: env.LaunchHost(), Data: data, Dest: dest, Mode: 0o700, Force: true,
	})
	for _, f := range failures {
		env.Errorf("%s", f)
	}
	if err != nil {
		env.Errorf("%v", err)
	}
	if err != nil || len(failures) > 0 {
		env.Errorf("Failed to broadcast '%s'. Step launch aborted.", prog)
		return "", false
	}
	return dest, true
}

// bcastDest is where --bcast[=dest] puts the program (see bcastExecutable).
func bcastDest(dest, workDir string, id model.JobID, prog string) string {
	name := fmt.Sprintf("slurm_bcast_%d_%s", id, filepath.Base(prog))
	switch {
	case dest == "":
		return filepath.Join(workDir, name)
	case strings.HasSuffix(dest, "/"):
		dest = filepath.Join(dest, name)
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(workDir, dest)
	}
	return dest
}

// findProgram resolves a command the way srun does before a broadcast: a
// name with a '/' from the working directory, a plain name through PATH
// (relative entries from the working directory) and then the working
// directory itself. The result is an executable regular file, or "".
func findProgram(name, workDir, pathEnv string) string {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(workDir, p)
	}
	if strings.Contains(name, "/") {
		if p := abs(name); isExecutable(p) {
			return p
		}
		return ""
	}
	for _, dir := range append(filepath.SplitList(pathEnv), workDir) {
		if dir == "" {
			dir = "."
		}
		if p := abs(filepath.Join(dir, name)); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && syscall.Access(p, 1 /* X_OK */) == nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
