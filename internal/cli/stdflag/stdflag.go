// Package stdflag is the option set of the commands that parse with
// pflag (--help, --usage, -V/--version, Slurm's words for a bad option).
// It is apart from package cli, which every command links, so that
// sbatch's binary (cmd/drover-sbatch), whose options jobspec parses,
// links no pflag.
package stdflag

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
)

// Std are the options every Slurm command takes besides its own.
type Std struct{ Help, Usage, Version bool }

// New is a command's option set, silent on errors (the command
// words them as Slurm does), with --help, --usage and -V/--version.
func New(prog string) (*pflag.FlagSet, *Std) {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	sf := &Std{}
	fs.BoolVar(&sf.Help, "help", false, "")
	fs.BoolVar(&sf.Usage, "usage", false, "")
	fs.BoolVarP(&sf.Version, "version", "V", false, "")
	return fs, sf
}

// Parse parses args into fs. A bad option prints Slurm's two lines
// and ends the command with 1; --version, --help and --usage print and
// end it with 0. done says whether the command should stop with code.
func Parse(env *cli.Env, fs *pflag.FlagSet, sf *Std, args []string, help, usage string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, strings.TrimPrefix(err.Error(), "unknown flag: "))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", env.Prog)
		return 1, true
	}
	switch {
	case sf.Version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
	case sf.Help:
		fmt.Fprint(env.Stdout, help)
	case sf.Usage:
		fmt.Fprint(env.Stdout, usage)
	default:
		return 0, false
	}
	return 0, true
}
