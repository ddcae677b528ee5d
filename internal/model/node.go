package model

// NodeState is a node's base state as the controller tracks it; IDLE,
// MIXED and ALLOCATED are derived from allocations by DisplayState.
type NodeState uint8

const (
	NodeUnknown NodeState = iota // never registered
	NodeUp                       // registered and responding
	NodeDown                     // declared or found down
	NodeFuture
)

// Node is one compute node: its configuration and its runtime state.
type Node struct {
	Name     string   `json:"name"`
	Addr     string   `json:"addr,omitempty"`
	Hostname string   `json:"hostname,omitempty"`
	CPUs     int      `json:"cpus"`
	Sockets  int      `json:"sockets"`
	Cores    int      `json:"cores"` // per socket
	Threads  int      `json:"threads"`
	Memory   int64    `json:"memory"` // MiB (RealMemory)
	Gres     string   `json:"gres,omitempty"`
	Features []string `json:"features,omitempty"`
	Weight   int      `json:"weight"`
	// DetectCPUs / DetectMemory: slurm.conf left these out, so the values
	// the node's agent reports at registration are used.
	DetectCPUs   bool `json:"detect_cpus,omitempty"`
	DetectMemory bool `json:"detect_memory,omitempty"`

	State NodeState `json:"state"`
	Drain bool      `json:"drain,omitempty"`
	// HealthDrain: the drain is the node's health check's, which lifts it
	// when the check passes again; an administrator's drain never is.
	HealthDrain bool `json:"health_drain,omitempty"`
	// InvalidReg: the node's agent registered fewer GPUs than slurm.conf
	// declares (Slurm's INVALID_REG, shown INVAL). No work goes to the
	// node, whatever its drain says, until a registration has them all:
	// its GPU list holds devices it does not have.
	InvalidReg bool   `json:"invalid_reg,omitempty"`
	Responding bool   `json:"responding"`
	Reason     string `json:"reason,omitempty"`
	ReasonUID  uint32 `json:"reason_uid,omitempty"`
	ReasonTime int64  `json:"reason_time,omitempty"`
	BootTime   int64  `json:"boot_time,omitempty"`
	LastSeen   int64  `json:"last_seen,omitempty"` // as committed; liveness lives in the leader
	Version    string `json:"version,omitempty"`
	RegTime    int64  `json:"reg_time,omitempty"`

	AllocCPUs int   `json:"alloc_cpus"`
	AllocMem  int64 `json:"alloc_mem"`

	// GPUs are the node's GPUs as its agent found them (gres.conf, NVML);
	// before the first registration, untyped placeholders counted from
	// Gres=. AllocGPUs holds the indices given to jobs, AllocCores the
	// CPU ids (0..CPUs-1) given to jobs.
	GPUs       []GPU  `json:"gpus,omitempty"`
	AllocGPUs  Bitmap `json:"alloc_gpus,omitempty"`
	AllocCores Bitmap `json:"alloc_cores,omitempty"`

	// Resv is the reservation flag of the node as a client shows it
	// ("MAINT", "RESERVED" or ""; see ResvNodeState). It is derived from
	// the reservations at display time, never stored.
	Resv string `json:"-"`
	// Planned: the backfill scheduler holds the node for a waiting job's
	// later start (sinfo PLANNED, "mix-"). The leader's last pass, never
	// stored.
	Planned bool `json:"-"`
}

// Usable reports whether new work may be placed on the node.
func (n *Node) Usable() bool { return n.State == NodeUp && !n.Drain && !n.InvalidReg && n.Responding }

// FreeCPUs and FreeMem are what the node has left.
func (n *Node) FreeCPUs() int  { return n.CPUs - n.AllocCPUs }
func (n *Node) FreeMem() int64 { return n.Memory - n.AllocMem }

// CanTake reports whether a, one node's share of an allocation, still fits
// n: the node takes work, has the CPUs and memory left, and none of the CPU
// ids or GPU indices a names is taken or beyond the node. The scheduler
// plans against a snapshot; the replicated log re-checks each start with
// this against the state the start is applied to.
func (n *Node) CanTake(a NodeAlloc) bool {
	if !n.Usable() || n.FreeCPUs() < a.CPUs || (a.Mem > 0 && n.FreeMem() < a.Mem) ||
		a.CPUIDs.Intersects(n.AllocCores) || a.GPUs.Intersects(n.AllocGPUs) {
		return false
	}
	for _, id := range a.GPUs.IDs() {
		if id >= len(n.GPUs) {
			return false
		}
	}
	return true
}

// DisplayState returns Slurm's long and compact state names, e.g.
// ("MIXED", "mix") or ("DRAINING", "drng"), with "*" appended to the compact
// name when the node does not respond.
func (n *Node) DisplayState() (long, short string) {
	busy := n.AllocCPUs > 0
	switch {
	case n.State == NodeFuture:
		long, short = "FUTURE", "futr"
	case n.InvalidReg:
		long, short = "INVAL", "inval"
	case n.State == NodeDown:
		long, short = "DOWN", "down"
	case n.Drain && busy:
		long, short = "DRAINING", "drng"
	case n.Drain:
		long, short = "DRAINED", "drain"
	case n.State == NodeUnknown:
		long, short = "UNKNOWN", "unk"
	case busy && n.AllocCPUs >= n.CPUs:
		long, short = "ALLOCATED", "alloc"
	case busy:
		long, short = "MIXED", "mix"
	default:
		long, short = "IDLE", "idle"
	}
	switch {
	case !n.Responding && n.State != NodeFuture:
		short += "*"
		long += "*"
	case n.Resv != "" && (long == "IDLE" || n.Resv == "MAINT"):
		long, short = resvState(n.Resv, long, short)
	case n.Planned && long == "IDLE":
		long, short = "PLANNED", "plnd"
	case n.Planned && long == "MIXED":
		long, short = "MIXED-", "mix-"
	}
	return long, short
}

// resvState applies a reservation flag as Slurm 22.05 prints it: an idle
// node shows MAINT or RESERVED (maint, resv); other nodes in a MAINT
// reservation get "$" appended; other reserved nodes print as they are.
func resvState(flag, long, short string) (string, string) {
	switch {
	case long == "IDLE" && flag == "MAINT":
		return "MAINT", "maint"
	case long == "IDLE":
		return "RESERVED", "resv"
	case flag == "MAINT":
		return long + "$", short + "$"
	}
	return long, short
}

// Clone returns a copy of n that may be modified.
func (n *Node) Clone() *Node {
	c := *n
	return &c
}

// JoinToken lets a new machine join the cluster as a node (drover agent
// --join). Only a hash of its secret is kept. A token is bound to node
// names and good for a bounded number of joins, each name at most once:
// whoever holds it can become only a node the admin meant, once.
type JoinToken struct {
	ID         string `json:"id"`
	SecretHash string `json:"secret_hash"` // hex SHA-256 of the secret
	Expires    int64  `json:"expires"`     // unix seconds; 0 = never
	Created    int64  `json:"created"`
	CreatedBy  uint32 `json:"created_by"`
	// Nodes is the hostlist expression of the names the token may join
	// as, or "ALL" (any node defined in slurm.conf). Tokens made before
	// names were bound have "" and count as ALL.
	Nodes string `json:"nodes,omitempty"`
	// Uses bounds the joins (0: one, for tokens made before the bound).
	Uses int `json:"uses,omitempty"`
	// Joined lists the names that joined with the token, in order.
	Joined []string `json:"joined,omitempty"`
}

// MaxUses is how many joins t allows.
func (t *JoinToken) MaxUses() int {
	if t.Uses < 1 {
		return 1
	}
	return t.Uses
}

// Clone returns a copy of t that may be modified.
func (t *JoinToken) Clone() *JoinToken {
	c := *t
	c.Joined = append([]string(nil), t.Joined...)
	return &c
}
