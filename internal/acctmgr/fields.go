package acctmgr

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is how a column prints its values, and what it shows for an
// entity that has no such value (sacctmgr prints that as a zero).
type kind int

const (
	kStr    kind = iota // text, cut to the width with a '+'
	kList               // TRES and QOS lists: as text
	kUint               // counts: never cut; blank when unset
	kMins               // time limits: [days-]hh:mm:ss
	kSecs               // times kept in seconds, printed the same way
	kDouble             // factors: %f
	kDate               // timestamps
)

// column is one field of a listing as the format names it.
type column struct {
	id     string // what the value is, for the row makers
	header string
	width  int // negative: aligned left
	kind   kind
}

// fieldSpelling is one way to name a field in format=: name shortened
// to at least min letters.
type fieldSpelling struct {
	name string
	min  int
	column
}

func f(name string, min int, id, header string, width int, k kind) fieldSpelling {
	return fieldSpelling{name, min, column{id, header, width, k}}
}

// fieldTable holds the field names sacctmgr knows, in the order it
// tries them: a short name takes the first field it abbreviates.
var fieldTable = []fieldSpelling{
	f("Account", 3, "acct", "Account", 10, kStr),
	f("Acct", 4, "acct", "Account", 10, kStr),
	f("ActionRaw", 7, "actionraw", "ActionRaw", 10, kUint),
	f("Action", 4, "action", "Action", 20, kStr),
	f("Actor", 4, "actor", "Actor", 10, kStr),
	f("AdminLevel", 2, "admin", "Admin", 9, kStr),
	f("Allowed", 2, "allowed", "% Allowed", 10, kUint),
	f("Associations", 2, "assoc", "Assocs", 10, kStr),
	f("TRES", 2, "tres", "TRES", 20, kStr),
	f("Classification", 3, "class", "Class", 9, kStr),
	f("ClusterNodes", 8, "clusternodes", "Cluster Nodes", 20, kStr),
	f("Clusters", 2, "cluster", "Cluster", 10, kStr),
	f("Coordinators", 2, "coords", "Coord Accounts", 20, kStr),
	f("ControlHost", 8, "chost", "ControlHost", 15, kStr),
	f("ControlPort", 8, "cport", "ControlPort", 12, kUint),
	f("Count", 3, "count", "Count", 6, kUint),
	f("CountAllowed", 6, "callowed", "# Allowed", 10, kUint),
	f("CountUsed", 6, "cused", "# Used", 10, kUint),
	f("CPUCount", 2, "cpus", "CPU Cnt", 7, kStr),
	f("DefaultAccount", 8, "dacct", "Def Acct", 10, kStr),
	f("DefaultQOS", 8, "dqos", "Def QOS", 9, kStr),
	f("DefaultWCKey", 8, "dwckey", "Def WCKey", 10, kStr),
	f("Description", 3, "desc", "Descr", 20, kStr),
	f("Duration", 2, "duration", "Duration", 13, kSecs),
	f("EventRaw", 6, "eventraw", "EventRaw", 8, kUint),
	f("Event", 2, "event", "Event", 7, kStr),
	f("Features", 3, "features", "Features", 20, kList),
	f("Federation", 3, "federation", "Federation", 10, kStr),
	f("FedState", 4, "fedstate", "FedState", 12, kStr),
	f("FedStateRaw", 9, "fedstateraw", "FedStateRaw", 11, kUint),
	f("Flags", 2, "flags", "Flags", 20, kStr),
	f("GraceTime", 3, "grace", "GraceTime", 10, kSecs),
	f("GrpCPUs", 6, "grpc", "GrpCPUs", 8, kUint),
	f("GrpCPUMins", 7, "grpcm", "GrpCPUMins", 11, kUint),
	f("GrpCPURunMins", 7, "grpcrm", "GrpCPURunMins", 13, kUint),
	f("GrpTRES", 7, "grpt", "GrpTRES", 13, kList),
	f("GrpTRESMins", 7, "grptm", "GrpTRESMins", 13, kList),
	f("GrpTRESRunMins", 7, "grptrm", "GrpTRESRunMins", 13, kList),
	f("GrpJobs", 4, "grpj", "GrpJobs", 7, kUint),
	f("GrpJobsAccrue", 8, "grpja", "GrpJobsAccrue", 13, kUint),
	f("GrpMemory", 4, "grpmem", "GrpMem", 7, kUint),
	f("GrpNodes", 4, "grpn", "GrpNodes", 8, kUint),
	f("GrpSubmitJobs", 4, "grps", "GrpSubmit", 9, kUint),
	f("GrpWall", 4, "grpw", "GrpWall", 11, kMins),
	f("ID", 2, "id", "ID", 6, kUint),
	f("Info", 2, "info", "Info", 20, kStr),
	f("LFT", 1, "lft", "LFT", 6, kUint),
	f("servertype", 10, "servertype", "ServerType", 10, kStr),
	f("MaxCPUMinsPerJob", 7, "maxcm", "MaxCPUMins", 11, kUint),
	f("MaxCPURunMinsPerUser", 7, "maxcrm", "MaxCPURunMinsPU", 15, kUint),
	f("MaxCPURunMinsPU", 7, "maxcrm", "MaxCPURunMinsPU", 15, kUint),
	f("MaxCPUsPerJob", 7, "maxc", "MaxCPUs", 8, kUint),
	f("MaxCPUsPerUser", 11, "maxcu", "MaxCPUsPU", 9, kUint),
	f("MaxCPUsPU", 9, "maxcu", "MaxCPUsPU", 9, kUint),
	f("MaxTRES", 7, "maxt", "MaxTRES", 13, kList),
	f("MaxTRESPerJob", 11, "maxt", "MaxTRES", 13, kList),
	f("MaxTRESPerNode", 11, "maxtn", "MaxTRESPerNode", 14, kList),
	f("MaxTRESMinsPerJob", 8, "maxtm", "MaxTRESMins", 13, kList),
	f("MaxTRESRunMinsPerAccount", 18, "maxtrma", "MaxTRESRunMinsPA", 15, kList),
	f("MaxTRESRunMinsPerAcct", 18, "maxtrma", "MaxTRESRunMinsPA", 15, kList),
	f("MaxTRESRunMinsPA", 15, "maxtrma", "MaxTRESRunMinsPA", 15, kList),
	f("MaxTRESRunMinsPerUser", 8, "maxtrm", "MaxTRESRunMinsPU", 15, kList),
	f("MaxTRESRunMinsPU", 8, "maxtrm", "MaxTRESRunMinsPU", 15, kList),
	f("MaxTRESPerAccount", 11, "maxta", "MaxTRESPA", 13, kList),
	f("MaxTRESPerAcct", 11, "maxta", "MaxTRESPA", 13, kList),
	f("MaxTRESPA", 9, "maxta", "MaxTRESPA", 13, kList),
	f("MaxTRESPerUser", 11, "maxtu", "MaxTRESPU", 13, kList),
	f("MaxTRESPU", 9, "maxtu", "MaxTRESPU", 13, kList),
	f("MaxJobs", 4, "maxj", "MaxJobs", 7, kUint),
	f("MaxJobsAccrue", 4, "maxja", "MaxJobsAccrue", 13, kUint),
	f("MaxJobsAccruePerAccount", 17, "maxjaa", "MaxJobsAccruePA", 15, kUint),
	f("MaxJobsAccruePerAcct", 17, "maxjaa", "MaxJobsAccruePA", 15, kUint),
	f("MaxJobsAccruePA", 15, "maxjaa", "MaxJobsAccruePA", 15, kUint),
	f("MaxJobsAccruePerUser", 17, "maxjau", "MaxJobsAccruePU", 15, kUint),
	f("MaxJobsAccruePU", 15, "maxjau", "MaxJobsAccruePU", 15, kUint),
	f("MaxJobsPerAccount", 11, "maxjpa", "MaxJobsPA", 9, kUint),
	f("MaxJobsPerAcct", 11, "maxjpa", "MaxJobsPA", 9, kUint),
	f("MaxJobsPA", 9, "maxjpa", "MaxJobsPA", 9, kUint),
	f("MaxJobsPerUser", 11, "maxj", "MaxJobsPU", 9, kUint),
	f("MaxJobsPU", 9, "maxj", "MaxJobsPU", 9, kUint),
	f("MaxNodesPerJob", 4, "maxn", "MaxNodes", 8, kUint),
	f("MaxNodesPerUser", 12, "maxnu", "MaxNodesPU", 10, kUint),
	f("MaxNodesPU", 10, "maxnu", "MaxNodesPU", 10, kUint),
	f("MinPrioThreshold", 4, "minpt", "MinPrioThres", 12, kUint),
	f("MaxSubmitJobs", 4, "maxs", "MaxSubmit", 9, kUint),
	f("MaxSubmitJobsPerAccount", 17, "maxsa", "MaxSubmitPA", 11, kUint),
	f("MaxSubmitJobsPerAcct", 17, "maxsa", "MaxSubmitPA", 11, kUint),
	f("MaxSubmitJobsPA", 15, "maxsa", "MaxSubmitPA", 11, kUint),
	f("MaxSubmitPA", 11, "maxsa", "MaxSubmitPA", 11, kUint),
	f("MaxSubmitJobsPerUser", 10, "maxs", "MaxSubmitPU", 11, kUint),
	f("MaxSubmitJobsPU", 10, "maxs", "MaxSubmitPU", 11, kUint),
	f("MaxSubmitPU", 6, "maxs", "MaxSubmitPU", 11, kUint),
	f("MaxWallDurationPerJob", 4, "maxw", "MaxWall", 11, kMins),
	f("MinCPUsPerJob", 7, "minc", "MinCPUs", 8, kUint),
	f("MinTRESPerJob", 7, "mint", "MinTRES", 13, kList),
	f("Name", 2, "name", "Name", 10, kStr),
	f("NodeCount", 5, "nodecnt", "NodeCount", 9, kUint),
	f("NodeInx", 5, "nodeinx", "NodeInx", 9, kStr),
	f("NodeNames", 5, "nodename", "NodeName", -15, kStr),
	f("Organization", 1, "org", "Org", 20, kStr),
	f("ParentID", 7, "pid", "ParentID", 8, kUint),
	f("ParentName", 7, "pname", "ParentName", 10, kStr),
	f("Partition", 4, "part", "Partition", 10, kStr),
	f("PluginIDSelect", 2, "select", "PluginIDSelect", 14, kUint),
	f("PreemptMode", 8, "preemptm", "PreemptMode", 11, kStr),
	f("Preempt", 7, "preempt", "Preempt", 10, kList),
	f("PreemptExemptTime", 8, "prxmpt", "PreemptExemptTime", 19, kSecs),
	f("Priority", 3, "prio", "Priority", 10, kUint),
	f("Problem", 1, "problem", "Problem", 40, kStr),
	f("QOSLevel", 3, "qos", "QOS", 20, kList),
	f("QOSRAWLevel", 4, "qosraw", "QOS_RAW", 10, kList),
	f("Reason", 1, "reason", "Reason", 30, kStr),
	f("RGT", 1, "rgt", "RGT", 6, kUint),
	f("RPC", 1, "rpc", "RPC", 5, kUint),
	f("Server", 3, "server", "Server", 10, kStr),
	f("Share", 1, "fairshare", "Share", 9, kUint),
	f("FairShare", 2, "fairshare", "Share", 9, kUint),
	f("StateRaw", 6, "stateraw", "StateRaw", 8, kUint),
	f("State", 1, "state", "State", 6, kStr),
	f("TimeStamp", 2, "ts", "Time", 19, kDate),
	f("TimeEligible", 6, "eligible", "TimeEligible", 19, kDate),
	f("Eligible", 2, "eligible", "TimeEligible", 19, kDate),
	f("TimeEnd", 6, "end", "TimeEnd", 19, kDate),
	f("End", 2, "end", "TimeEnd", 19, kDate),
	f("TimeStart", 7, "start", "TimeStart", 19, kDate),
	f("Start", 3, "start", "TimeStart", 19, kDate),
	f("TimeSubmit", 6, "submit", "TimeSubmit", 19, kDate),
	f("Submit", 2, "submit", "TimeSubmit", 19, kDate),
	f("Type", 2, "type", "Type", 8, kStr),
	f("UnusedWall", 2, "unused", "UnusedWall", 10, kDouble),
	f("UsageFactor", 6, "uf", "UsageFactor", 11, kDouble),
	f("UsageThreshold", 6, "ut", "UsageThres", 10, kDouble),
	f("LimitFactor", 6, "lf", "LimitFactor", 11, kDouble),
	f("Allocated", 7, "allocated", "% Allocated", 11, kUint),
	f("User", 1, "user", "User", 10, kStr),
	f("WCKeys", 2, "wckeys", "WCKeys", 20, kList),
	f("Where", 2, "where", "Where", 20, kStr),
}

// parseField reads one item of format=: a field name, optionally
// followed by %WIDTH (negative: aligned left; 0 keeps the default).
func parseField(item string, tree bool) (column, error) {
	name, width, hasWidth := strings.Cut(item, "%")
	for _, s := range fieldTable {
		if !abbrev(name, s.name, s.min) {
			continue
		}
		c := s.column
		if c.id == "acct" && tree {
			c.width = -20
		}
		if hasWidth {
			if n := atoi(width); n != 0 {
				c.width = n
			}
		}
		return c, nil
	}
	return column{}, errorf("Unknown field '%s'\n", name)
}

// atoi reads a leading integer as C's atoi does (0 when there is none).
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t")
	neg := strings.HasPrefix(s, "-")
	v := leadingInts(strings.TrimLeft(s, "+-"), 0, 1)
	if len(v) == 0 || v[0] > 1<<20 {
		return 0
	}
	if neg {
		return -int(v[0])
	}
	return int(v[0])
}

// value is one cell: text, or nothing (unset).
type value struct {
	s   string
	set bool
}

func text(s string) value { return value{s, true} }
func num(n int) value     { return value{strconv.Itoa(n), true} }

var unset = value{}

// countValue prints a count limit: blank when there is none.
func countValue(n int) value {
	if n < 0 {
		return unset
	}
	return num(n)
}

// zero is what sacctmgr prints in a column the row's entity has no
// value for: a zero of the column's type.
func zero(k kind) value {
	switch k {
	case kUint:
		return text("0")
	case kMins, kSecs:
		return text("00:00:00")
	case kDate:
		return text("Unknown")
	}
	return unset
}

// Output modes of listings.
const (
	Aligned   = 0
	Parsable  = 1 // -p: '|' after every field
	Parsable2 = 2 // -P: '|' between fields
)

// printer writes a listing in one of the output modes.
type printer struct {
	b    strings.Builder
	cols []column
	mode int
}

func (p *printer) header() {
	for i, c := range p.cols {
		p.cell(i, c.header, true)
	}
	p.b.WriteByte('\n')
	if p.mode != Aligned {
		return
	}
	for _, c := range p.cols {
		p.b.WriteString(strings.Repeat("-", abs(c.width)))
		p.b.WriteByte(' ')
	}
	p.b.WriteByte('\n')
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// cell writes column i's text; header texts are cut without a mark.
func (p *printer) cell(i int, s string, header bool) {
	c := p.cols[i]
	if p.mode != Aligned {
		p.b.WriteString(s)
		if p.mode == Parsable || i < len(p.cols)-1 {
			p.b.WriteByte('|')
		}
		return
	}
	w := abs(c.width)
	if len(s) > w {
		switch {
		case header:
			s = s[:w]
		case c.kind == kStr || c.kind == kList:
			s = s[:w-1] + "+"
		}
	}
	if c.width < 0 {
		fmt.Fprintf(&p.b, "%-*s ", w, s)
	} else {
		fmt.Fprintf(&p.b, "%*s ", w, s)
	}
}

func (p *printer) row(vals []value) {
	for i, v := range vals {
		p.cell(i, v.s, false)
	}
	p.b.WriteByte('\n')
}
