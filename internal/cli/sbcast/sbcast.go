// Package sbcast is the sbcast command: it copies a file to every node of
// a running job. The nodes dial sbcast, receive the file and write it as
// the job's user; each answers with its result.
package sbcast

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/bcast"
	"github.com/drover-hpc/drover/internal/model"
)

// Run is the sbcast entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs := pflag.NewFlagSet("sbcast", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	force := fs.BoolP("force", "f", false, "replace the destination file if it exists")
	preserve := fs.BoolP("preserve", "p", false, "keep the modification time and mode")
	jobFlag := fs.StringP("jobid", "j", "", "job id (default: SLURM_JOB_ID)")
	timeout := fs.IntP("timeout", "t", 0, "seconds to wait for the nodes")
	fs.StringP("compress", "C", "", "accepted; transfers are not compressed")
	fs.IntP("fanout", "F", 0, "accepted; every node fetches from sbcast")
	fs.StringP("size", "s", "", "accepted; the block size is fixed")
	fs.BoolP("verbose", "v", false, "verbose")
	fs.Lookup("compress").NoOptDefVal = "lz4"
	help := fs.BoolP("help", "h", false, "show help")
	version := fs.BoolP("version", "V", false, "show version")
	if err := fs.Parse(args); err != nil {
		env.Errorf("%v", err)
		fmt.Fprintln(env.Stderr, "Try \"sbcast --help\" for more information")
		return 1
	}
	switch {
	case *help:
		fmt.Fprintf(env.Stdout, "Usage: sbcast [OPTIONS] SOURCE DEST\n%s", fs.FlagUsages())
		return 0
	case *version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	}
	if fs.NArg() != 2 {
		env.Errorf("Need two file names, have %d names", fs.NArg())
		fmt.Fprintln(env.Stderr, "Try \"sbcast --help\" for more information")
		return 1
	}
	jobStr := *jobFlag
	if jobStr == "" {
		jobStr = env.Getenv("SLURM_JOB_ID")
	}
	jobID, err := strconv.ParseUint(jobStr, 10, 32)
	if err != nil || jobID == 0 {
		env.Errorf("Need a job id: run sbcast inside an allocation or give --jobid")
		return 1
	}
	src, dest := fs.Arg(0), fs.Arg(1)
	if !filepath.IsAbs(dest) {
		if wd, err := os.Getwd(); err == nil {
			dest = filepath.Join(wd, dest)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		env.Errorf("Can't open `%s`: %v", src, unwrap(err))
		return 1
	}
	st, _ := os.Stat(src)
	mode := uint32(st.Mode().Perm())
	var mtime int64
	if *preserve {
		mtime = st.ModTime().Unix()
	}

	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	failures, err := bcast.Send(ctx, c, bcast.File{
		Job: model.JobID(jobID), LaunchHost: env.LaunchHost(), Data: data, Dest: dest, Mode: mode,
		Force: *force, MTime: mtime, Timeout: time.Duration(*timeout) * time.Second,
	})
	for _, f := range failures {
		env.Errorf("%s", f)
	}
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	if len(failures) > 0 {
		return 1
	}
	return 0
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
