package slurmconf

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
	"github.com/drover-hpc/drover/internal/units"
)

// maxIncludeDepth stops include chains that are not loops by name but grow
// without end (a.conf includes ./x/a.conf, and so on).
const maxIncludeDepth = 16

// maxTotalNodes bounds the node count of one config. It is a variable so
// the fuzz test can lower it and keep each run fast.
var maxTotalNodes = 1 << 18

// Option adjusts how Parse reads a config.
type Option func(*parser)

// WithOpener makes Include lines open files through open instead of
// os.Open; tests and embedded configs use it. Paths reaching open are
// already resolved against the including file's directory.
func WithOpener(open func(path string) (io.ReadCloser, error)) Option {
	return func(p *parser) { p.open = open }
}

// ControllerOnly reads the top-level keys alone — where the controller
// is, its socket, port and state directory — and skips the node,
// partition, DownNodes and NodeSet lines: what the Slurm commands need,
// who start often and learn the rest from the controller (node lines
// of a large cluster cost them most: their host lists are expanded).
// Unknown keys are not looked for: the daemons warn of them.
func ControllerOnly() Option {
	return func(p *parser) { p.controllerOnly = true }
}

// Load reads and parses the slurm.conf at path.
func Load(path string, opts ...Option) (*Config, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(b), path, opts...)
}

// readFile reads path whole with plain system calls: every Slurm command
// reads slurm.conf, and os.Open would start the runtime's poller for it
// (an epoll instance, an eventfd), which a command on the local socket
// does not otherwise use. Its errors read as os.Open's and os.File's.
func readFile(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	size := 0
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		size = int(st.Size)
	}
	b := make([]byte, 0, size+512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// Parse parses a slurm.conf read from r. name is used in messages and as
// the base for relative Include paths.
func Parse(r io.Reader, name string, opts ...Option) (*Config, error) {
	p := &parser{
		cfg:       newConfig(name),
		open:      func(path string) (io.ReadCloser, error) { return os.Open(path) },
		rawIndex:  map[string]int{},
		nodeIndex: map[string]int{},
		partIndex: map[string]int{},
		nodeSets:  map[string]*nodeSetLine{},
		nodeDef:   defaultNodeSpec(),
		partDef:   defaultPartSpec(),
	}
	for _, o := range opts {
		o(p)
	}
	p.stack = []string{filepath.Clean(name)}
	if err := readLines(r, name, func(l logicalLine) error { return p.line(name, l) }); err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

type parser struct {
	cfg   *Config
	open  func(string) (io.ReadCloser, error)
	stack []string // files being read, outermost first, for loop detection

	rawIndex map[string]int // lower-case key -> index in cfg.Raw

	nodeDef   nodeSpec
	nodeIndex map[string]int // node name -> index in cfg.Nodes
	downLines []downLine
	nodeSets  map[string]*nodeSetLine

	partDef   partSpec
	partIndex map[string]int // partition name -> index in cfg.Partitions
	defPart   *Pos           // the first Default=YES partition

	ctlHostPos, legacyPos *Pos
	legacy                [2]ControllerHost // ControlMachine/Addr, BackupController/Addr

	controllerOnly bool // see ControllerOnly
}

func (p *parser) warnf(pos Pos, format string, args ...any) {
	p.cfg.Warnings = append(p.cfg.Warnings, pos.String()+": "+fmt.Sprintf(format, args...))
}

func (p *parser) unknown(pos Pos, key string) {
	p.warnf(pos, "unknown key %q", key)
}

// line handles one logical line of file.
func (p *parser) line(file string, l logicalLine) error {
	pos := Pos{file, l.num}
	if rest, ok := cutInclude(l.text); ok {
		return p.include(pos, rest)
	}
	pairs, err := splitPairs(l.text)
	if err != nil {
		return perr(file, l.num, err.Error())
	}
	switch strings.ToLower(pairs[0].key) {
	case "nodename", "partitionname", "downnodes", "nodeset":
		if p.controllerOnly {
			return nil
		}
	}
	switch strings.ToLower(pairs[0].key) {
	case "nodename":
		return p.nodeLine(pos, pairs)
	case "partitionname":
		return p.partitionLine(pos, pairs)
	case "downnodes":
		return p.downNodesLine(pos, pairs)
	case "nodeset":
		return p.nodeSetLine(pos, pairs)
	case "frontendname":
		p.warnf(pos, "FrontendName lines are not supported; line ignored")
		return nil
	}
	for _, kv := range pairs {
		if err := p.global(pos, kv); err != nil {
			return err
		}
	}
	return nil
}

// cutInclude recognises "Include <path>" (any case) and returns the path.
func cutInclude(text string) (string, bool) {
	const kw = "include"
	if len(text) < len(kw) || !strings.EqualFold(text[:len(kw)], kw) || len(text) > len(kw) && !isSpace(text[len(kw)]) {
		return "", false
	}
	return strings.TrimSpace(text[len(kw):]), true
}

func (p *parser) include(pos Pos, path string) error {
	// %c stands for the cluster name, so sites can share one file tree.
	path = strings.ReplaceAll(path, "%c", p.cfg.ClusterName)
	return includeFile(p.open, &p.stack, pos, path, func(file string, l logicalLine) error { return p.line(file, l) })
}

// includeFile reads the file an Include line at pos names (relative to the
// including file's directory) through open and hands its lines to fn.
// stack holds the files being read, outermost first: a name already on it
// is an include loop, and it may grow at most maxIncludeDepth deep.
func includeFile(open func(string) (io.ReadCloser, error), stack *[]string, pos Pos, path string,
	fn func(file string, l logicalLine) error) error {
	if len(path) >= 2 && path[0] == '"' && path[len(path)-1] == '"' {
		path = path[1 : len(path)-1]
	}
	if path == "" {
		return perr(pos.File, pos.Line, "Include without a file name")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(pos.File), path)
	}
	path = filepath.Clean(path)
	for _, f := range *stack {
		if f == path {
			return perr(pos.File, pos.Line, fmt.Sprintf("include loop: %s -> %s", strings.Join(*stack, " -> "), path))
		}
	}
	if len(*stack) > maxIncludeDepth {
		return perr(pos.File, pos.Line, fmt.Sprintf("includes nested deeper than %d", maxIncludeDepth))
	}
	rc, err := open(path)
	if err != nil {
		return perr(pos.File, pos.Line, fmt.Sprintf("Include: %v", err))
	}
	defer rc.Close()
	*stack = append(*stack, path)
	defer func() { *stack = (*stack)[:len(*stack)-1] }()
	return readLines(rc, path, func(l logicalLine) error { return fn(path, l) })
}

// readConf reads one of the smaller files beside slurm.conf (gres.conf,
// cgroup.conf): its logical lines, Include lines followed as in
// slurm.conf, go to fn with the file each comes from.
func readConf(r io.Reader, name string, opts []Option, fn func(file string, l logicalLine) error) error {
	p := &parser{open: func(path string) (io.ReadCloser, error) { return os.Open(path) }}
	for _, o := range opts {
		o(p)
	}
	stack := []string{filepath.Clean(name)}
	var line func(file string, l logicalLine) error
	line = func(file string, l logicalLine) error {
		if rest, ok := cutInclude(l.text); ok {
			return includeFile(p.open, &stack, Pos{file, l.num}, rest, line)
		}
		return fn(file, l)
	}
	return readLines(r, name, func(l logicalLine) error { return line(name, l) })
}

// recordRaw keeps kv for `scontrol show config`.
func (p *parser) recordRaw(kv pair, repeatable bool) {
	lower := strings.ToLower(kv.key)
	if i, ok := p.rawIndex[lower]; ok && !repeatable {
		p.cfg.Raw[i] = KV{kv.key, kv.value}
		return
	}
	p.rawIndex[lower] = len(p.cfg.Raw)
	p.cfg.Raw = append(p.cfg.Raw, KV{kv.key, kv.value})
}

// global applies one top-level key.
func (p *parser) global(pos Pos, kv pair) error {
	lower := strings.ToLower(kv.key)
	switch lower {
	case "nodename", "partitionname", "downnodes", "nodeset", "frontendname":
		return perr(pos.File, pos.Line, fmt.Sprintf("%s must start its own line", kv.key))
	}
	// The commands never show warnings (the daemons do), and the set of
	// known keys is built on its first use: ~0.1 ms of every command's
	// start.
	if !p.controllerOnly && !globalKeys.has(lower) {
		p.unknown(pos, kv.key)
	}
	p.recordRaw(kv, lower == "slurmctldhost")
	bad := func(want string) error {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s %q: want %s", kv.key, kv.value, want))
	}
	c, v := p.cfg, kv.value
	var err error
	switch lower {
	case "schedulertype":
		p.parseSchedulerType(pos, v)
	case "schedulerparameters":
		p.parseSchedulerParameters(pos, v)
	case "preemptparameters", "schedulertimeslice":
		return p.parsePreemptKey(pos, lower, v, bad)
	case "clustername":
		// Slurm folds cluster names to lower case for its database.
		c.ClusterName = strings.ToLower(v)
	case "slurmctldhost":
		h, ok := parseControllerHost(v)
		if !ok {
			return bad("host or host(addr)")
		}
		c.ControllerHosts = append(c.ControllerHosts, h)
		if p.ctlHostPos == nil {
			p.ctlHostPos = &pos
		}
	case "controlmachine", "controladdr", "backupcontroller", "backupaddr":
		if p.legacyPos == nil {
			p.legacyPos = &pos
		}
		i := 0
		if strings.HasPrefix(lower, "backup") {
			i = 1
		}
		if strings.HasSuffix(lower, "addr") {
			p.legacy[i].Addr = v
		} else {
			p.legacy[i].Name = v
		}
	case "slurmctldport":
		// A range runs several listeners; Drover needs only the first.
		first, _, _ := strings.Cut(v, "-")
		if c.SlurmctldPort, err = parsePort(first); err != nil {
			return bad("a port or port range")
		}
	case "slurmdport":
		if c.SlurmdPort, err = parsePort(v); err != nil {
			return bad("a port")
		}
	case "statesavelocation":
		c.StateSaveLocation = v
	case "slurmdspooldir":
		c.SlurmdSpoolDir = v
	case "slurmuser":
		c.SlurmUser = v
	case "droversocket":
		c.DroverSocket = v
	case "prolog":
		c.Prolog = v
	case "epilog":
		c.Epilog = v
	case "taskprolog":
		c.TaskProlog = v
	case "taskepilog":
		c.TaskEpilog = v
	case "healthcheckprogram":
		c.HealthCheckProgram = v
	case "healthchecknodestate":
		c.HealthCheckNodeState = v
		for _, st := range splitList(v) {
			if !healthCheckStates.has(strings.ToLower(st)) {
				p.warnf(pos, "HealthCheckNodeState: unknown state %q", st)
			}
		}
	case "prologflags":
		c.PrologFlags = nil
		for _, f := range splitList(v) {
			f = strings.ToLower(f)
			if !prologFlags.has(f) {
				p.warnf(pos, "PrologFlags: unknown flag %q", f)
			}
			c.PrologFlags = append(c.PrologFlags, f)
		}
	case "grestypes":
		c.GresTypes = splitList(v)
	case "accountingstoragetype":
		t, ok := accountingTypes[strings.ToLower(strings.TrimPrefix(strings.ToLower(v), "accounting_storage/"))]
		if !ok {
			return bad("accounting_storage/ followed by none, slurmdbd, sqlite, mysql or postgres")
		}
		c.Accounting.Type = t
	case "accountingstoragehost":
		c.Accounting.Host = v
	case "accountingstorageport":
		n, err := parseInt(v, 1, 65535)
		if err != nil {
			return bad("port")
		}
		c.Accounting.Port = int(n)
	case "accountingstorageuser":
		c.Accounting.User = v
	case "accountingstoragepass":
		c.Accounting.Pass = v
	case "accountingstorageloc":
		c.Accounting.Loc = v
	case "accountingstorageenforce":
		c.Accounting.Enforce = nil
		for _, f := range splitList(v) {
			f = strings.ToLower(f)
			if !enforceFlags[f] {
				p.warnf(pos, "AccountingStorageEnforce: unknown flag %q", f)
			}
			c.Accounting.Enforce = append(c.Accounting.Enforce, f)
		}
	case "healthcheckinterval", "prologepilogtimeout":
		n, err := parseInt(v, 0, 1<<31-1)
		if err != nil {
			return bad("seconds")
		}
		if lower == "healthcheckinterval" {
			c.HealthCheckInterval = time.Duration(n) * time.Second
		} else {
			c.PrologEpilogTimeout = time.Duration(n) * time.Second
		}
	case "slurmdtimeout", "killwait", "minjobage", "inactivelimit":
		n, err := parseInt(v, 0, 1<<31-1)
		if err != nil {
			return bad("seconds")
		}
		d := time.Duration(n) * time.Second
		switch lower {
		case "slurmdtimeout":
			c.SlurmdTimeout = d
		case "killwait":
			c.KillWait = d
		case "minjobage":
			c.MinJobAge = d
		default:
			c.InactiveLimit = d
		}
	case "maxarraysize":
		if c.MaxArraySize, err = parseInt(v, 0, 4000001); err != nil {
			return bad("an integer from 0 to 4000001")
		}
	case "maxjobcount":
		if c.MaxJobCount, err = parseInt(v, 1, 1<<31-1); err != nil {
			return bad("a positive integer")
		}
	case "prioritytype":
		switch strings.ToLower(v) {
		case "priority/multifactor":
			c.Priority.Multifactor = true
		case "priority/basic":
			c.Priority.Multifactor = false
		default:
			return bad("priority/basic or priority/multifactor")
		}
	case "priorityweightage", "priorityweightfairshare", "priorityweightjobsize", "priorityweightpartition", "priorityweightqos":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<32-1 {
			return bad("a weight from 0 to 4294967295")
		}
		w := map[string]*uint32{"priorityweightage": &c.Priority.WeightAge, "priorityweightfairshare": &c.Priority.WeightFairshare,
			"priorityweightjobsize": &c.Priority.WeightJobSize, "priorityweightpartition": &c.Priority.WeightPartition,
			"priorityweightqos": &c.Priority.WeightQOS}[lower]
		*w = uint32(n)
	case "prioritymaxage", "prioritydecayhalflife", "prioritycalcperiod":
		n, err := units.ParseDuration(v)
		if err != nil || n < 0 {
			return bad("a time (minutes, or [days-]hours:minutes:seconds)")
		}
		switch lower {
		case "prioritymaxage":
			c.Priority.MaxAge = n
		case "prioritydecayhalflife":
			c.Priority.DecayHalfLife = n
		default:
			c.Priority.CalcPeriod = max(1, n)
		}
	case "priorityfavorsmall":
		b, ok := parseBool(v)
		if !ok {
			return bad("YES or NO")
		}
		c.Priority.FavorSmall = b
	case "priorityflags":
		for _, f := range strings.Split(v, ",") {
			switch strings.ToUpper(strings.TrimSpace(f)) {
			case "SMALL_RELATIVE_TO_TIME":
				c.Priority.SmallRelativeToTime = true
			case "NO_FAIR_TREE":
				c.Priority.NoFairTree = true
			case "DEPTH_OBLIVIOUS":
				// Slurm: a variant of the classic formula, so no Fair Tree.
				c.Priority.NoFairTree, c.Priority.DepthOblivious = true, true
			case "MAX_TRES":
				c.Priority.MaxTRES = true
			case "CALCULATE_RUNNING":
				c.Priority.CalculateRunning = true
			case "NO_NORMAL_PART":
				c.Priority.NoNormalPart = true
			case "NO_NORMAL_QOS":
				c.Priority.NoNormalQOS = true
			case "NO_NORMAL_TRES":
				c.Priority.NoNormalTRES = true
			case "NO_NORMAL_ALL":
				c.Priority.NoNormalPart, c.Priority.NoNormalQOS, c.Priority.NoNormalTRES = true, true, true
			case "", "ACCRUE_ALWAYS", "INCR_ONLY", "MAX_TRES_GRES", "NO_NORMAL_ASSOC":
				// Accepted; Drover has no association factor and does
				// not act on these.
			default:
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: PriorityFlags: unknown flag %q ignored", pos, strings.TrimSpace(f)))
			}
		}
	case "priorityweighttres":
		w, err := priority.ParseTRESWeights(v, false)
		if err != nil {
			return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s: %v", kv.key, err))
		}
		c.Priority.WeightTRES, c.Priority.WeightTRESRaw = w, v
	case "priorityusageresetperiod":
		r, err := priority.ParseResetPeriod(v)
		if err != nil {
			return bad(err.Error()[len("want "):])
		}
		c.Priority.UsageReset = r
	case "preempttype":
		t := strings.ToLower(strings.TrimPrefix(strings.ToLower(v), "preempt/"))
		switch t {
		case "none", "partition_prio", "qos":
			c.PreemptType = t
		default:
			return bad("preempt/none, preempt/partition_prio or preempt/qos")
		}
	case "preemptmode":
		m, ok := ParsePreemptMode(v)
		if !ok || m == "" {
			return bad("OFF, CANCEL, REQUEUE or SUSPEND, with GANG or WITHIN")
		}
		c.PreemptMode = m
		c.PreemptGang = strings.Contains(strings.ToUpper(v), "GANG")
		c.PreemptWithin = strings.Contains(strings.ToUpper(v), "WITHIN")
	case "preemptexempttime":
		n, err := units.ParseDuration(v)
		if err != nil || n < 0 {
			return bad("a time")
		}
		c.PreemptExemptTime = n
	case "maxstepcount":
		if c.MaxStepCount, err = parseInt(v, 1, 1<<31-1); err != nil {
			return bad("a positive integer")
		}
	case "firstjobid":
		n, err := parseInt(v, 1, 1<<32-1)
		if err != nil {
			return bad("a positive 32-bit integer")
		}
		c.FirstJobID = uint32(n)
	case "returntoservice":
		if c.ReturnToService, err = parseInt(v, 0, 2); err != nil {
			return bad("0, 1 or 2")
		}
	case "defmempercpu", "defmempernode", "maxmempercpu", "maxmempernode":
		mib, err := parseMem(v)
		if err != nil {
			return bad("a size in MiB or UNLIMITED")
		}
		switch lower {
		case "defmempercpu":
			c.DefMemPerCPU = mib
		case "defmempernode":
			c.DefMemPerNode = mib
		case "maxmempercpu":
			c.MaxMemPerCPU = mib
		default:
			c.MaxMemPerNode = mib
		}
	}
	return nil
}

func parseControllerHost(v string) (ControllerHost, bool) {
	name, addr, hasAddr := strings.Cut(v, "(")
	if hasAddr {
		var ok bool
		if addr, ok = strings.CutSuffix(addr, ")"); !ok || addr == "" || strings.ContainsAny(addr, "()") {
			return ControllerHost{}, false
		}
	}
	if name == "" || strings.ContainsAny(name, ")") {
		return ControllerHost{}, false
	}
	return ControllerHost{Name: name, Addr: addr}, true
}

// parseInt parses a decimal integer within [lo, hi].
func parseInt(v string, lo, hi int64) (int, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("out of range")
	}
	return int(n), nil
}

func parsePort(v string) (int, error) { return parseInt(v, 1, 65535) }

// parseMem parses a memory size in MiB; 0 and UNLIMITED mean unset.
func parseMem(v string) (int64, error) {
	switch strings.ToUpper(v) {
	case "UNLIMITED", "INFINITE":
		return 0, nil
	}
	return units.ParseMemMiB(v)
}

// finish resolves what needs the whole file: controllers, node sets,
// DownNodes and partition node lists.
func (p *parser) finish() error {
	c := p.cfg
	main := Pos{c.File, 0}
	if p.legacyPos != nil {
		if p.ctlHostPos != nil {
			return perr(p.legacyPos.File, p.legacyPos.Line, "ControlMachine/BackupController cannot be combined with SlurmctldHost")
		}
		for _, h := range p.legacy {
			if h.Name == "" && h.Addr != "" {
				return perr(p.legacyPos.File, p.legacyPos.Line, "ControlAddr/BackupAddr given without its ControlMachine/BackupController")
			}
			if h.Name != "" {
				c.ControllerHosts = append(c.ControllerHosts, h)
			}
		}
	}
	if c.ClusterName == "" {
		c.ClusterName = DefaultClusterName
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: ClusterName is not set; using %q", main.File, DefaultClusterName))
	}
	if len(c.ControllerHosts) == 0 {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: no SlurmctldHost given", main.File))
	}
	if p.controllerOnly {
		return nil
	}
	if err := p.resolveNodeSets(); err != nil {
		return err
	}
	if err := p.applyDownNodes(); err != nil {
		return err
	}
	p.checkGresTypes()
	return p.resolvePartitions()
}

// checkGresTypes warns about node Gres= names that GresTypes does not
// list: Slurm refuses such a configuration; Drover schedules the GPUs but
// says what Slurm would reject.
func (p *parser) checkGresTypes() {
	c := p.cfg
	warned := map[string]bool{}
	for _, n := range c.Nodes {
		items, _ := model.ParseGres(n.Gres)
		for _, it := range items {
			if !hasString(c.GresTypes, it.Name) && !warned[it.Name] {
				warned[it.Name] = true
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: Gres=%s on NodeName=%s but GresTypes does not list %s",
					n.Pos, n.Gres, n.Name, it.Name))
			}
		}
	}
}

// ParsePreemptMode reads a PreemptMode value (OFF, CANCEL, REQUEUE,
// SUSPEND, each optionally with GANG or WITHIN, comma-separated) into the
// mode without GANG and WITHIN; a bare GANG is "OFF" (time-slicing only).
// GANG and WITHIN together are refused, as in Slurm.
func ParsePreemptMode(v string) (string, bool) {
	mode := ""
	up := strings.ToUpper(v)
	if strings.Contains(up, "GANG") && strings.Contains(up, "WITHIN") {
		return "", false
	}
	for _, f := range strings.Split(strings.ToUpper(strings.TrimSpace(v)), ",") {
		switch f = strings.TrimSpace(f); f {
		case "GANG", "WITHIN":
		case "OFF", "CANCEL", "REQUEUE", "SUSPEND":
			if mode != "" {
				return "", false
			}
			mode = f
		case "CHECKPOINT":
			// Removed from Slurm; treated as REQUEUE, as configurations
			// carried from old sites still name it.
			mode = "REQUEUE"
		default:
			return "", false
		}
	}
	if mode == "" {
		mode = "OFF"
	}
	return mode, true
}
