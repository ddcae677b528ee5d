package slurmconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
	"github.com/drover-hpc/drover/internal/units"
)

// partSpec is a PartitionName line's settings; PartitionName=DEFAULT lines
// edit the template later lines start from.
type partSpec struct {
	nodes                           string
	isDefault                       bool
	maxTime, defaultTime            int64
	state                           model.PartitionState
	priorityTier, priorityJobFactor int
	maxNodes, minNodes              int
	allowAccounts, allowGroups      []string
	denyAccounts, allowQOS, denyQOS []string
	qos                             string
	overSubscribe                   string
	preemptMode                     string // "" = the global PreemptMode
	graceTime                       int64  // seconds
	billingWeights                  []priority.TRESWeight
}

func defaultPartSpec() partSpec {
	return partSpec{
		maxTime: model.Unlimited, defaultTime: model.Unset, state: model.PartUp,
		priorityTier: 1, priorityJobFactor: 1, maxNodes: model.Unlimited, overSubscribe: "NO",
	}
}

// maxPriority is the largest PriorityTier/PriorityJobFactor Slurm accepts.
const maxPriority = 65533

func (p *parser) partitionLine(pos Pos, pairs []pair) error {
	name := pairs[0].value
	if name == "" {
		return perr(pos.File, pos.Line, "PartitionName without a name")
	}
	spec := p.partDef
	for _, kv := range pairs[1:] {
		if err := p.partKey(pos, &spec, kv); err != nil {
			return err
		}
	}
	if strings.EqualFold(name, "DEFAULT") {
		p.partDef = spec
		return nil
	}
	if i, dup := p.partIndex[name]; dup {
		return perr(pos.File, pos.Line, fmt.Sprintf("duplicate partition %q (first defined at %s)", name, p.cfg.Partitions[i].Pos))
	}
	if spec.maxNodes != model.Unlimited && spec.minNodes > spec.maxNodes {
		return perr(pos.File, pos.Line, fmt.Sprintf("MinNodes %d exceeds MaxNodes %d", spec.minNodes, spec.maxNodes))
	}
	if spec.isDefault {
		if p.defPart != nil {
			return perr(pos.File, pos.Line, fmt.Sprintf("partition %q is Default=YES, but so is the one at %s", name, p.defPart))
		}
		p.defPart = &pos
	}
	p.partIndex[name] = len(p.cfg.Partitions)
	p.cfg.Partitions = append(p.cfg.Partitions, PartitionConf{
		Name:              name,
		NodesExpr:         spec.nodes,
		Default:           spec.isDefault,
		MaxTime:           spec.maxTime,
		DefaultTime:       spec.defaultTime,
		State:             spec.state,
		PriorityTier:      spec.priorityTier,
		PriorityJobFactor: spec.priorityJobFactor,
		MaxNodes:          spec.maxNodes,
		MinNodes:          spec.minNodes,
		AllowAccounts:     spec.allowAccounts,
		AllowGroups:       spec.allowGroups,
		DenyAccounts:      spec.denyAccounts,
		AllowQOS:          spec.allowQOS,
		DenyQOS:           spec.denyQOS,
		QOS:               spec.qos,
		OverSubscribe:     spec.overSubscribe,
		PreemptMode:       spec.preemptMode,
		GraceTime:         spec.graceTime,
		BillingWeights:    spec.billingWeights,
		Pos:               pos,
	})
	return nil
}

func (p *parser) partKey(pos Pos, s *partSpec, kv pair) error {
	lower := strings.ToLower(kv.key)
	v := kv.value
	bad := func(want string) error {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s %q: want %s", kv.key, v, want))
	}
	var err error
	switch lower {
	case "partitionname":
		return perr(pos.File, pos.Line, "PartitionName given twice on one line")
	case "nodes":
		s.nodes = v
	case "default":
		var ok bool
		if s.isDefault, ok = parseBool(v); !ok {
			return bad("YES or NO")
		}
	case "maxtime":
		if s.maxTime, err = units.ParseDuration(v); err != nil {
			return bad("a time limit or UNLIMITED")
		}
	case "defaulttime":
		if strings.EqualFold(v, "NONE") {
			s.defaultTime = model.Unset
		} else if s.defaultTime, err = units.ParseDuration(v); err != nil {
			return bad("a time limit, UNLIMITED or NONE")
		}
	case "state":
		switch strings.ToUpper(v) {
		case "UP":
			s.state = model.PartUp
		case "DOWN":
			s.state = model.PartDown
		case "DRAIN":
			s.state = model.PartDrain
		case "INACTIVE":
			s.state = model.PartInactive
		default:
			return bad("UP, DOWN, DRAIN or INACTIVE")
		}
	case "priority", "prioritytier", "priorityjobfactor":
		n, err := parseInt(v, 0, maxPriority)
		if err != nil {
			return bad(fmt.Sprintf("an integer from 0 to %d", maxPriority))
		}
		// The old single Priority key set both, and Slurm still reads it so.
		if lower != "priorityjobfactor" {
			s.priorityTier = n
		}
		if lower != "prioritytier" {
			s.priorityJobFactor = n
		}
	case "tresbillingweights":
		w, err := priority.ParseTRESWeights(v, true)
		if err != nil {
			return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s: %v", kv.key, err))
		}
		s.billingWeights = w
	case "maxnodes":
		switch strings.ToUpper(v) {
		case "UNLIMITED", "INFINITE":
			s.maxNodes = model.Unlimited
		default:
			if s.maxNodes, err = parseInt(v, 1, 1<<31-1); err != nil {
				return bad("a positive integer or UNLIMITED")
			}
		}
	case "minnodes":
		if s.minNodes, err = parseInt(v, 0, 1<<31-1); err != nil {
			return bad("a non-negative integer")
		}
	case "allowaccounts":
		s.allowAccounts = parseAllowList(v)
	case "allowgroups":
		s.allowGroups = parseAllowList(v)
	case "denyaccounts":
		s.denyAccounts = lowerList(splitList(v))
	case "allowqos":
		s.allowQOS = lowerList(parseAllowList(v))
	case "denyqos":
		s.denyQOS = lowerList(splitList(v))
	case "qos":
		s.qos = strings.ToLower(v)
	case "preemptmode":
		m, ok := ParsePreemptMode(v)
		if !ok {
			return bad("OFF, CANCEL, REQUEUE or SUSPEND (with GANG)")
		}
		s.preemptMode = m
	case "gracetime":
		if s.graceTime, err = units.ParseDuration(v); err != nil || s.graceTime < 0 {
			return bad("a time in seconds")
		}
	case "oversubscribe", "shared":
		o, ok := parseOverSubscribe(v)
		if !ok {
			return bad("NO, YES[:n], FORCE[:n] or EXCLUSIVE")
		}
		s.overSubscribe = o
	default:
		if !partitionKeys.has(lower) {
			p.unknown(pos, kv.key)
		}
	}
	return nil
}

func parseBool(v string) (bool, bool) {
	switch strings.ToUpper(v) {
	case "YES", "TRUE", "1":
		return true, true
	case "NO", "FALSE", "0":
		return false, true
	}
	return false, false
}

// parseAllowList returns nil for ALL (no restriction), else the names.
func parseAllowList(v string) []string {
	if strings.EqualFold(v, "ALL") {
		return nil
	}
	return splitList(v)
}

func parseOverSubscribe(v string) (string, bool) {
	u := strings.ToUpper(v)
	mode, count, hasCount := strings.Cut(u, ":")
	switch mode {
	case "NO", "EXCLUSIVE":
		return u, !hasCount
	case "YES", "FORCE":
		if !hasCount {
			return u, true
		}
		n, err := strconv.Atoi(count)
		return mode + ":" + strconv.Itoa(n), err == nil && n > 0 && n <= maxCount
	}
	return "", false
}

// resolvePartitions expands every partition's Nodes= now that all nodes
// and node sets are known; partitions may precede the nodes they name.
func (p *parser) resolvePartitions() error {
	for i := range p.cfg.Partitions {
		part := &p.cfg.Partitions[i]
		if part.NodesExpr == "" {
			continue
		}
		nodes, err := p.expandNodes(part.Pos, part.NodesExpr, true)
		if err != nil {
			e := err.(*ParseError)
			e.Msg = fmt.Sprintf("partition %q: %s", part.Name, e.Msg)
			return e
		}
		part.Nodes = nodes
	}
	return nil
}

// lowerList lower-cases account and QOS names, which accounting stores in
// lower case.
func lowerList(l []string) []string {
	for i, v := range l {
		l[i] = strings.ToLower(v)
	}
	return l
}
