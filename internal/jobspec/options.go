package jobspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// kindSet is the commands an option belongs to.
type kindSet uint8

const (
	kS   kindSet = 1 << iota // sbatch
	kR                       // srun
	kA                       // salloc
	kAll = kS | kR | kA
)

func (k kindSet) has(kind Kind) bool { return kind >= 0 && kind < 3 && k&(1<<kind) != 0 }

// setter applies one option value; given is false when an option with an
// optional argument (or none) appeared without one.
type setter func(p *parser, v string, given bool) error

// optDef is one option. A nil set stores the value in Options.Extra: the
// option is accepted (scripts carry it) but not part of model.JobSpec.
type optDef struct {
	long  string
	short byte
	arg   argKind
	kinds kindSet
	meta  string // argument name for --help
	help  string
	set   setter
}

func specStr(f func(*model.JobSpec) *string) setter {
	return func(p *parser, v string, _ bool) error { *f(p.spec) = v; return nil }
}

// positive parses a count the way Slurm's parse_int does for --ntasks & co.
func positive(name string, f func(*model.JobSpec) *int) setter {
	return func(p *parser, v string, _ bool) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n <= 0 {
			return &Error{Msg: fmt.Sprintf("Invalid numeric value \"%s\" for --%s.", v, name)}
		}
		*f(p.spec) = int(n)
		return nil
	}
}

func optFlag(f func(*Options) *bool) setter {
	return func(p *parser, _ string, _ bool) error { *f(p.opts) = true; return nil }
}

func memSetter(name string, f func(*parser) *int64, allowZero bool) setter {
	return func(p *parser, v string, _ bool) error {
		n, err := units.ParseMemMiB(v)
		if err != nil || (n == 0 && !allowZero) {
			return optErr("Invalid --" + name + " specification")
		}
		*f(p) = n
		p.memLayer[name] = p.layer
		return nil
	}
}

func setTime(p *parser, v string, _ bool) error {
	n, err := units.ParseDuration(v)
	if err != nil {
		return optErr("Invalid --time specification")
	}
	p.spec.TimeLimit = n
	return nil
}

func setTimeMin(p *parser, v string, _ bool) error {
	n, err := units.ParseDuration(v)
	if err != nil {
		return optErr("Invalid --time-min specification")
	}
	if n <= 0 {
		n = model.Unset
	}
	p.spec.TimeMin = n
	return nil
}

func setNodes(p *parser, v string, _ bool) error {
	lo, hi, err := ParseNodes(v)
	if err != nil {
		return err
	}
	p.spec.MinNodes, p.spec.MaxNodes = lo, hi
	return nil
}

func nodeList(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v} // a hostlist expression; the server expands it
}

func setExclusive(p *parser, v string, given bool) error {
	delete(p.opts.Extra, "exclusive")
	switch strings.ToLower(v) {
	case "":
		p.spec.Exclusive = true
		return nil
	case "user", "mcs", "topo", "allocation":
		p.spec.Exclusive = false
		p.opts.Extra["exclusive"] = v
		return nil
	}
	return optErr("Invalid --exclusive specification")
}

const maxNice = math.MaxInt32 - 2 // Slurm: NICE_OFFSET - 3

func setNice(p *parser, v string, given bool) error {
	n := int64(100)
	if given {
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return optErr("Invalid --nice specification")
		}
	}
	if n > maxNice || n < -maxNice {
		return optErr(fmt.Sprintf("Invalid --nice value, out of range (+/- %d)", maxNice))
	}
	p.spec.Nice = int(n)
	return nil
}

func setRequeue(p *parser, v string, given bool) error {
	delete(p.opts.Extra, "requeue")
	if given {
		if !strings.EqualFold(v, "expedite") {
			return optErr("Invalid --requeue specification")
		}
		p.opts.Extra["requeue"] = v
	}
	p.spec.Requeue = true
	return nil
}

func setOpenMode(p *parser, v string, _ bool) error {
	switch {
	case v != "" && (v[0] == 'a' || v[0] == 'A'):
		p.spec.OpenMode = "append"
	case v != "" && (v[0] == 't' || v[0] == 'T'):
		p.spec.OpenMode = "truncate"
	default:
		return optErr("Invalid --open-mode specification")
	}
	return nil
}

func setKillInvalidDep(p *parser, v string, _ bool) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes":
		p.spec.KillInvalidDep = model.KillDepYes
	case "no":
		p.spec.KillInvalidDep = model.KillDepNo
	default:
		return optErr("Invalid --kill-on-invalid-dep specification")
	}
	return nil
}

func setBegin(p *parser, v string, _ bool) error {
	t, err := ParseBegin(v, p.ctx.Now)
	if err != nil {
		return err
	}
	p.spec.BeginTime = t.Unix()
	return nil
}

func setImmediate(p *parser, v string, given bool) error {
	p.opts.Immediate = 1 // Slurm's default when -I has no value
	if given {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return &Error{Msg: fmt.Sprintf("Invalid numeric value \"%s\" for immediate.", v)}
		}
		p.opts.Immediate = n
	}
	return nil
}

var mailTypes = map[string]bool{
	"NONE": true, "BEGIN": true, "END": true, "FAIL": true, "REQUEUE": true, "ALL": true,
	"INVALID_DEPEND": true, "STAGE_OUT": true, "TIME_LIMIT": true, "TIME_LIMIT_90": true,
	"TIME_LIMIT_80": true, "TIME_LIMIT_50": true, "ARRAY_TASKS": true,
}

func setMailType(p *parser, v string, _ bool) error {
	for _, t := range strings.Split(v, ",") {
		if !mailTypes[strings.ToUpper(t)] {
			return optErr("Invalid --mail-type specification")
		}
	}
	p.opts.Extra["mail-type"] = v
	return nil
}

var signalNames = map[string]bool{
	"HUP": true, "INT": true, "QUIT": true, "ILL": true, "TRAP": true, "ABRT": true,
	"BUS": true, "FPE": true, "KILL": true, "USR1": true, "SEGV": true, "USR2": true,
	"PIPE": true, "ALRM": true, "TERM": true, "CHLD": true, "CONT": true, "STOP": true,
	"TSTP": true, "TTIN": true, "TTOU": true, "URG": true, "XCPU": true, "XFSZ": true,
	"VTALRM": true, "PROF": true, "WINCH": true, "IO": true, "POLL": true, "PWR": true, "SYS": true,
}

// setSignal checks --signal=[{R|B}:]sig[@secs].
func setSignal(p *parser, v string, _ bool) error {
	bad := optErr("Invalid --signal specification")
	sig := v
	if flags, rest, ok := strings.Cut(v, ":"); ok {
		if flags == "" || strings.Trim(strings.ToUpper(flags), "RB") != "" {
			return bad
		}
		sig = rest
	}
	sig, secs, hasSecs := strings.Cut(sig, "@")
	if hasSecs {
		if _, ok := parseDigits(secs, 0xffff); !ok {
			return bad
		}
	}
	if n, ok := parseDigits(sig, 64); ok {
		if n == 0 {
			return bad
		}
	} else if !signalNames[strings.TrimPrefix(strings.ToUpper(sig), "SIG")] {
		return bad
	}
	p.opts.Extra["signal"] = v
	return nil
}

func setTmp(p *parser, v string, _ bool) error {
	if _, err := units.ParseMemMiB(v); err != nil {
		return optErr("Invalid --tmp specification")
	}
	p.opts.Extra["tmp"] = v
	return nil
}

func setJobID(p *parser, v string, _ bool) error {
	if _, ok := parseDigits(strings.TrimSpace(v), maxJobID); !ok {
		return &Error{Msg: fmt.Sprintf("Invalid numeric value \"%s\" for --jobid.", v)}
	}
	p.opts.JobID = strings.TrimSpace(v)
	return nil
}

func setVerbose(p *parser, _ string, _ bool) error { p.opts.Verbose++; return nil }

// nonNegative parses a count where 0 is allowed, worded as positive's.
func nonNegative(name, v string) (int, error) {
	n, ok := parseDigits(strings.TrimSpace(v), math.MaxInt32)
	if !ok {
		return 0, &Error{Msg: fmt.Sprintf("Invalid numeric value \"%s\" for --%s.", v, name)}
	}
	return n, nil
}

// setDistribution checks srun -m
// {*|block|cyclic|arbitrary|plane=N}[:{*|block|cyclic|fcyclic}[:...]][,{Pack|NoPack}]
// and keeps it in a normal form: lower case, "Pack"/"NoPack".
func setDistribution(p *parser, v string, _ bool) error {
	d, ok := normDistribution(v)
	if !ok {
		return optErr("Invalid --distribution specification")
	}
	p.opts.Distribution = d
	return nil
}

func normDistribution(v string) (string, bool) {
	levels, pack, hasPack := strings.Cut(v, ",")
	parts := strings.Split(levels, ":")
	if len(parts) > 3 {
		return "", false
	}
	for i, part := range parts {
		l := strings.ToLower(part)
		switch {
		case l == "*" || l == "block" || l == "cyclic":
		case i == 0 && l == "arbitrary":
		case i == 0 && strings.HasPrefix(l, "plane="):
			n, ok := parseDigits(l[len("plane="):], math.MaxInt32)
			if !ok || n == 0 {
				return "", false
			}
			l = "plane=" + strconv.Itoa(n)
		case i > 0 && l == "fcyclic":
		default:
			return "", false
		}
		parts[i] = l
	}
	out := strings.Join(parts, ":")
	if hasPack {
		switch strings.ToLower(pack) {
		case "pack":
			out += ",Pack"
		case "nopack":
			out += ",NoPack"
		default:
			return "", false
		}
	}
	return out, true
}

// setKillOnBadExit reads srun -K[0|1]: no value or a non-zero one turns it
// on, 0 off.
func setKillOnBadExit(p *parser, v string, given bool) error {
	n := 1
	if given {
		var err error
		if n, err = nonNegative("kill-on-bad-exit", v); err != nil {
			return err
		}
	}
	p.opts.KillOnBadExit = n != 0
	return nil
}

func setSrunWait(p *parser, v string, _ bool) error {
	n, err := nonNegative("wait", v)
	if err != nil {
		return err
	}
	p.opts.WaitSec = n
	return nil
}

// setMPI keeps --mpi (or SLURM_MPI_TYPE); finish decides on it.
func setMPI(p *parser, v string, _ bool) error {
	p.opts.MPI = strings.ToLower(strings.TrimSpace(v))
	p.mpiFrom = "--mpi=" + v
	if p.layer == layerEnv {
		p.mpiFrom = "SLURM_MPI_TYPE=" + v
	}
	return nil
}

// setSrunInput reads srun -i: "all", "none" or a task rank say which tasks
// get srun's stdin; anything else is a file name pattern.
func setSrunInput(p *parser, v string, _ bool) error {
	p.opts.Input, p.spec.StdIn = "", ""
	switch l := strings.ToLower(v); {
	case l == "all" || l == "none":
		p.opts.Input = l
	case v != "" && strings.Trim(v, "0123456789") == "":
		n, ok := parseDigits(v, math.MaxInt32)
		if !ok {
			return optErr("Invalid --input specification")
		}
		p.opts.Input = strconv.Itoa(n)
	default:
		p.spec.StdIn = v
	}
	return nil
}

func setBcast(p *parser, v string, given bool) error {
	p.opts.Bcast, p.opts.BcastSet = "", true
	if given {
		p.opts.Bcast = v
	}
	return nil
}

// optTable lists every option of sbatch, srun and salloc. Options whose
// short letter differs between commands appear once per spelling.
var optTable = []optDef{
	{"account", 'A', reqArg, kAll, "name", "charge job to specified account", specStr(func(s *model.JobSpec) *string { return &s.Account })},
	{"array", 'a', reqArg, kS, "indexes", "job array index values", func(p *parser, v string, _ bool) error { p.array, p.arraySet = v, true; return nil }},
	{"begin", 'b', reqArg, kS | kR, "time", "defer job until HH:MM MM/DD/YY", setBegin},
	{"begin", 0, reqArg, kA, "time", "defer job until HH:MM MM/DD/YY", setBegin},
	{"chdir", 'D', reqArg, kAll, "directory", "set working directory for the job", func(p *parser, v string, _ bool) error { p.chdir = v; return nil }},
	{"comment", 0, reqArg, kAll, "name", "arbitrary comment", specStr(func(s *model.JobSpec) *string { return &s.Comment })},
	{"constraint", 'C', reqArg, kAll, "list", "specify a list of constraints", specStr(func(s *model.JobSpec) *string { return &s.Features })},
	{"mincpus", 0, reqArg, kAll, "n", "minimum number of logical processors per node", positive("mincpus", func(s *model.JobSpec) *int { return &s.MinCPUsNode })},
	{"cpus-per-task", 'c', reqArg, kAll, "ncpus", "number of cpus required per task", positive("cpus-per-task", func(s *model.JobSpec) *int { return &s.CPUsPerTask })},
	{"dependency", 'd', reqArg, kAll, "type:jobid", "defer job until condition on jobid is satisfied", func(p *parser, v string, _ bool) error { p.dependency, p.depSet = v, true; return nil }},
	{"error", 'e', reqArg, kS | kR, "err", "file for batch script's standard error", specStr(func(s *model.JobSpec) *string { return &s.StdErr })},
	{"exclude", 'x', reqArg, kAll, "hosts", "exclude a specific list of hosts", func(p *parser, v string, _ bool) error { p.spec.ExcNodes = nodeList(v); return nil }},
	{"exclusive", 0, optArg, kAll, "user|mcs|topo", "allocate nodes in exclusive mode", setExclusive},
	{"export", 0, reqArg, kS | kR, "names", "environment variables to pass to the job (ALL, NONE, NIL or a list)", func(p *parser, v string, _ bool) error { p.export, p.exportSet = v, true; return nil }},
	{"help", 'h', noArg, kAll, "", "show this help message", optFlag(func(o *Options) *bool { return &o.Help })},
	{"hold", 'H', noArg, kAll, "", "submit job in held state", func(p *parser, _ string, _ bool) error { p.spec.Hold = true; return nil }},
	{"immediate", 'I', optArg, kR | kA, "secs", "exit if resources not available in \"secs\"", setImmediate},
	{"input", 'i', reqArg, kS, "in", "file for batch script's standard input", specStr(func(s *model.JobSpec) *string { return &s.StdIn })},
	{"input", 'i', reqArg, kR, "in", "all, none, a task rank, or a file for the tasks' standard input", setSrunInput},
	{"job-name", 'J', reqArg, kAll, "jobname", "name of job", func(p *parser, v string, _ bool) error { p.spec.Name, p.nameSet = v, true; return nil }},
	{"jobid", 0, reqArg, kR, "id", "run under already allocated job", setJobID},
	{"label", 'l', noArg, kR, "", "prepend task number to lines of stdout/err", optFlag(func(o *Options) *bool { return &o.Label })},
	{"mem", 0, reqArg, kAll, "MB", "minimum amount of real memory (0 = all of the node)", memSetter("mem", func(p *parser) *int64 { return &p.spec.MemPerNode }, true)},
	{"mem-per-cpu", 0, reqArg, kAll, "MB", "maximum amount of real memory per allocated cpu", memSetter("mem-per-cpu", func(p *parser) *int64 { return &p.spec.MemPerCPU }, false)},
	{"mem-per-gpu", 0, reqArg, kAll, "MB", "real memory required per allocated GPU", memSetter("mem-per-gpu", func(p *parser) *int64 { return &p.memPerGPU }, false)},
	{"nice", 0, optArg, kAll, "value", "decrease scheduling priority by value", setNice},
	{"no-requeue", 0, noArg, kS, "", "if set, do not permit the job to be requeued", func(p *parser, _ string, _ bool) error {
		delete(p.opts.Extra, "requeue")
		p.spec.Requeue = false
		return nil
	}},
	{"nodelist", 'w', reqArg, kAll, "hosts", "request a specific list of hosts", func(p *parser, v string, _ bool) error { p.spec.ReqNodes = nodeList(v); return nil }},
	{"nodes", 'N', reqArg, kAll, "N", "number of nodes on which to run (N = min[-max])", setNodes},
	{"ntasks", 'n', reqArg, kAll, "ntasks", "number of tasks to run", positive("ntasks", func(s *model.JobSpec) *int { return &s.NTasks })},
	{"ntasks-per-node", 0, reqArg, kAll, "n", "number of tasks to invoke on each node", positive("ntasks-per-node", func(s *model.JobSpec) *int { return &s.TasksPerNode })},
	{"open-mode", 0, reqArg, kS | kR, "append|truncate", "output file open mode", setOpenMode},
	{"output", 'o', reqArg, kS | kR, "out", "file for batch script's standard output", specStr(func(s *model.JobSpec) *string { return &s.StdOut })},
	{"overlap", 0, noArg, kR, "", "allow the step to share resources with other steps", optFlag(func(o *Options) *bool { return &o.Overlap })},
	{"exact", 0, noArg, kR, "", "use only the resources requested for the step", optFlag(func(o *Options) *bool { return &o.Exact })},
	{"parsable", 0, noArg, kS | kR, "", "outputs only the jobid and cluster name (if present)", optFlag(func(o *Options) *bool { return &o.Parsable })},
	{"partition", 'p', reqArg, kAll, "partition", "partition requested", specStr(func(s *model.JobSpec) *string { return &s.Partition })},
	{"pty", 0, optArg, kR, "fd", "run task zero in pseudo terminal", optFlag(func(o *Options) *bool { return &o.Pty })},
	{"qos", 'q', reqArg, kAll, "qos", "quality of service", specStr(func(s *model.JobSpec) *string { return &s.QOS })},
	{"quiet", 'Q', noArg, kAll, "", "quiet mode (suppress informational messages)", optFlag(func(o *Options) *bool { return &o.Quiet })},
	{"requeue", 0, optArg, kS, "expedite", "if set, permit the job to be requeued", setRequeue},
	{"test-only", 0, noArg, kS | kR, "", "validate and report when the job would start; submit nothing", optFlag(func(o *Options) *bool { return &o.TestOnly })},
	{"time", 't', reqArg, kAll, "minutes", "time limit", setTime},
	{"time-min", 0, reqArg, kAll, "minutes", "minimum time limit (if distinct)", setTimeMin},
	{"unbuffered", 'u', noArg, kR, "", "do not line-buffer stdout/err", optFlag(func(o *Options) *bool { return &o.Unbuffered })},
	{"usage", 0, noArg, kAll, "", "display brief usage message", optFlag(func(o *Options) *bool { return &o.Usage })},
	{"verbose", 'v', noArg, kAll, "", "verbose mode (multiple -v's increase verbosity)", setVerbose},
	{"version", 'V', noArg, kAll, "", "output version information and exit", optFlag(func(o *Options) *bool { return &o.Version })},
	{"wait", 'W', noArg, kS, "", "wait for completion of submitted job", optFlag(func(o *Options) *bool { return &o.Wait })},
	{"wait", 'W', reqArg, kR, "sec", "seconds to wait after first task exits before killing job", setSrunWait},
	{"bcast", 0, optArg, kR, "dest_path", "copy executable file to compute nodes", setBcast},
	{"distribution", 'm', reqArg, kR, "type", "distribution method for processes to nodes", setDistribution},
	{"kill-on-bad-exit", 'K', optArg, kR, "0|1", "kill the job if any task terminates with a non-zero exit code", setKillOnBadExit},
	{"mpi", 0, reqArg, kR, "type", "type of MPI being used (none only)", setMPI},
	{"multi-prog", 0, noArg, kR, "", "the executable is a multi-program configuration file", optFlag(func(o *Options) *bool { return &o.MultiProg })},
	{"wrap", 0, reqArg, kS, "command", "wrap command string in a sh script and submit", func(p *parser, v string, _ bool) error { p.wrap, p.wrapSet = v, true; return nil }},
	// Accepted and kept in Options.Extra; model.JobSpec has no field for them.
	{"acctg-freq", 0, reqArg, kAll, "freq", "accounting sampling interval", nil},
	{"bb", 0, reqArg, kAll, "spec", "burst buffer specifications", nil},
	{"bbf", 0, reqArg, kAll, "file", "burst buffer specification file", nil},
	{"bell", 0, noArg, kA, "", "ring the terminal bell when the allocation is granted", nil},
	{"cluster-constraint", 0, reqArg, kAll, "list", "features a federated cluster must have", nil},
	{"clusters", 'M', reqArg, kAll, "names", "comma separated list of clusters", nil},
	{"container", 0, reqArg, kAll, "path", "path to OCI container bundle", nil},
	{"contiguous", 0, noArg, kAll, "", "demand a contiguous range of nodes", nil},
	{"core-spec", 'S', reqArg, kAll, "cores", "count of reserved cores", nil},
	{"cores-per-socket", 0, reqArg, kAll, "C", "number of cores per socket to allocate", nil},
	{"cpu-bind", 0, reqArg, kR, "type", "bind tasks to CPUs", nil},
	{"cpu-freq", 0, reqArg, kAll, "min[-max[:gov]]", "requested cpu frequency", nil},
	{"cpus-per-gpu", 0, reqArg, kAll, "n", "number of CPUs required per allocated GPU", setCPUsPerGPU},
	{"deadline", 0, reqArg, kAll, "time", "remove the job if no ending possible before this deadline", nil},
	{"delay-boot", 0, reqArg, kAll, "mins", "delay boot for desired node features", nil},
	{"disable-status", 'X', noArg, kR, "", "disable the Ctrl-C status feature", nil},
	{"distribution", 'm', reqArg, kS | kA, "type", "distribution method for processes to nodes", nil},
	{"export-file", 0, reqArg, kS, "file", "file of environment variables for the job", nil},
	{"extra-node-info", 'B', reqArg, kAll, "S[:C[:T]]", "expands to sockets, cores, threads", nil},
	{"get-user-env", 0, optArg, kS, "timeout", "load the user's login environment", nil},
	{"gid", 0, reqArg, kAll, "group_id", "group ID to run job as (user root only)", setGID},
	{"gpu-bind", 0, reqArg, kAll, "type", "task to gpu binding options", nil},
	{"gpu-freq", 0, reqArg, kAll, "type=value", "frequency and voltage of GPUs", nil},
	{"gpus", 'G', reqArg, kAll, "n", "count of GPUs required for the job", gpuSetter("gpus", gpuTotal)},
	{"gpus-per-node", 0, reqArg, kAll, "n", "number of GPUs required per allocated node", gpuSetter("gpus-per-node", gpuPerNode)},
	{"gpus-per-socket", 0, reqArg, kAll, "n", "number of GPUs required per allocated socket", nil},
	{"gpus-per-task", 0, reqArg, kAll, "n", "number of GPUs required per spawned task", gpuSetter("gpus-per-task", gpuPerTask)},
	{"gres", 0, reqArg, kAll, "list", "required generic resources", gpuSetter("gres", gpuPerNode)},
	{"gres-flags", 0, reqArg, kAll, "opts", "flags related to GRES management", nil},
	{"hint", 0, reqArg, kAll, "hint", "bind tasks according to application hints", nil},
	{"ignore-pbs", 0, noArg, kS, "", "ignore #PBS and #BSUB options in the batch script", nil},
	{"kill-command", 'K', optArg, kA, "signal", "signal to send terminating job", nil},
	{"kill-on-invalid-dep", 0, reqArg, kS, "yes|no", "terminate the job if it has an invalid dependency", setKillInvalidDep},
	{"licenses", 'L', reqArg, kAll, "names", "required license, comma separated", nil},
	{"mail-type", 0, reqArg, kAll, "type", "notify on state change: BEGIN, END, FAIL or ALL", setMailType},
	{"mail-user", 0, reqArg, kAll, "user", "who to send email notification for job state changes", nil},
	{"mcs-label", 0, reqArg, kAll, "mcs", "mcs label if mcs plugin mcs/group is used", nil},
	{"mem-bind", 0, reqArg, kAll, "type", "bind memory to locality domains", nil},
	{"network", 0, reqArg, kAll, "type", "specify information pertaining to the switch or network", nil},
	{"no-bell", 0, noArg, kA, "", "do not ring the terminal bell", nil},
	{"no-kill", 'k', optArg, kAll, "on|off", "do not kill job on node failure", nil},
	{"no-shell", 0, noArg, kA, "", "immediately exit after allocating resources, without running a command", nil},
	{"ntasks-per-core", 0, reqArg, kAll, "n", "number of tasks to invoke on each core", nil},
	{"ntasks-per-gpu", 0, reqArg, kAll, "n", "number of tasks to invoke for each GPU", nil},
	{"ntasks-per-socket", 0, reqArg, kAll, "n", "number of tasks to invoke on each socket", nil},
	{"overcommit", 'O', noArg, kAll, "", "overcommit resources", nil},
	{"oversubscribe", 's', noArg, kAll, "", "oversubscribe resources with other jobs", nil},
	{"prefer", 0, reqArg, kAll, "list", "features desired but not required by the job", nil},
	{"preserve-env", 'E', noArg, kR, "", "keep the job's node and task counts in the environment", nil},
	{"priority", 0, reqArg, kAll, "value", "set the priority of the job to value", setPriority},
	{"profile", 0, reqArg, kAll, "value", "enable acct_gather_profile for detailed data", nil},
	{"propagate", 0, optArg, kS | kR, "rlimits", "propagate all [or specific list of] rlimits", nil},
	{"reboot", 0, noArg, kAll, "", "reboot compute nodes before starting job", nil},
	{"reservation", 0, reqArg, kAll, "name", "allocate resources from named reservation", specStr(func(s *model.JobSpec) *string { return &s.Reservation })},
	{"signal", 0, reqArg, kAll, "[R|B:]num[@time]", "send signal when time limit within time seconds", setSignal},
	{"sockets-per-node", 0, reqArg, kAll, "S", "number of sockets per node to allocate", nil},
	{"spread-job", 0, noArg, kAll, "", "spread job across as many nodes as possible", nil},
	{"switches", 0, reqArg, kAll, "max[@waittime]", "optimum switches and max time to wait for optimum", nil},
	{"thread-spec", 0, reqArg, kAll, "threads", "count of reserved threads", nil},
	{"threads-per-core", 0, reqArg, kAll, "T", "number of threads per core to allocate", nil},
	{"tmp", 0, reqArg, kAll, "MB", "minimum amount of temporary disk", setTmp},
	{"tres-per-task", 0, reqArg, kAll, "list", "list of tres required per task", nil},
	{"uid", 0, reqArg, kAll, "user_id", "user ID to run job as (user root only)", setUID},
	{"use-min-nodes", 0, noArg, kAll, "", "if a range of node counts is given, prefer the smaller count", nil},
	{"wait-all-nodes", 0, reqArg, kS | kA, "0|1", "wait for all nodes to be ready before starting", nil},
	{"wckey", 0, reqArg, kAll, "wckey", "wckey to run job under", nil},
	{"x11", 0, optArg, kR | kA, "all|first|last", "forward X11 to the job", nil},
}
