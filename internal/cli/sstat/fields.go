package sstat

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/drover-hpc/drover/internal/format"
)

// field is one sstat column: its name, default width (negative: left
// aligned) and value. Values that are unknown are "" (printed blank).
type field struct {
	name  string
	width int
	value func(r *row, o *options) string
}

func fixed(v string) func(*row, *options) string { return func(*row, *options) string { return v } }

// stat makes a field of the measured figures: blank when the row has none
// (pid listings, or no node answered).
func stat(f func(s *stepStats, o *options) string) func(*row, *options) string {
	return func(r *row, o *options) string {
		if r.stats == nil {
			return ""
		}
		return f(r.stats, o)
	}
}

// fieldList is sstat's field table, in Slurm's order: a name given to
// -o is the first field it starts (case aside).
// Built on first use: its closures were allocated at every command's start.
var fieldList = sync.OnceValue(func() []field {
	return []field{
		{"AveCPU", 10, stat(func(s *stepStats, _ *options) string { return cpuClock(s.aveCPU) })},
		{"AveCPUFreq", 10, fixed("0")},
		{"AveDiskRead", 12, fixed("")},
		{"AveDiskWrite", 12, fixed("")},
		{"AvePages", 10, fixed("")},
		{"AveRSS", 10, stat(func(s *stepStats, o *options) string { return mem(s.aveRSS, o) })},
		{"AveVMSize", 10, fixed("")},
		{"ConsumedEnergy", 14, fixed("0")},
		{"ConsumedEnergyRaw", 17, fixed("0")},
		{"JobID", -12, func(r *row, _ *options) string { return r.id }},
		{"MaxDiskRead", 12, fixed("")},
		{"MaxDiskReadNode", 15, fixed("")},
		{"MaxDiskReadTask", 15, fixed("")},
		{"MaxDiskWrite", 12, fixed("")},
		{"MaxDiskWriteNode", 16, fixed("")},
		{"MaxDiskWriteTask", 16, fixed("")},
		{"MaxPages", 8, fixed("")},
		{"MaxPagesNode", 12, fixed("")},
		{"MaxPagesTask", 14, fixed("")},
		{"MaxRSS", 10, stat(func(s *stepStats, o *options) string { return mem(s.maxRSS.v, o) })},
		{"MaxRSSNode", 10, stat(func(s *stepStats, _ *options) string { return s.maxRSS.node })},
		{"MaxRSSTask", 10, stat(func(s *stepStats, _ *options) string { return task(s.maxRSS.task) })},
		{"MaxVMSize", 10, fixed("")},
		{"MaxVMSizeNode", 14, fixed("")},
		{"MaxVMSizeTask", 14, fixed("")},
		{"MinCPU", 10, stat(func(s *stepStats, _ *options) string { return cpuClock(s.minCPU.v) })},
		{"MinCPUNode", 10, stat(func(s *stepStats, _ *options) string { return s.minCPU.node })},
		{"MinCPUTask", 10, stat(func(s *stepStats, _ *options) string { return task(s.minCPU.task) })},
		{"Nodelist", 20, func(r *row, _ *options) string { return r.nodes }},
		{"NTasks", 8, func(r *row, _ *options) string { return strconv.Itoa(r.ntasks) }},
		{"Pids", 20, func(r *row, _ *options) string { return r.pids }},
		{"ReqCPUFreq", 10, fixed("Unknown")},
		{"ReqCPUFreqMin", 13, fixed("Unknown")},
		{"ReqCPUFreqMax", 13, fixed("Unknown")},
		{"ReqCPUFreqGov", 13, fixed("Unknown")},
		{"TRESUsageInAve", 14, stat(func(s *stepStats, o *options) string { return tres(cpuClock(s.aveCPU), mem(s.aveRSS, o)) })},
		{"TRESUsageInMax", 14, stat(func(s *stepStats, o *options) string { return tres(cpuClock(s.maxCPU.v), mem(s.maxRSS.v, o)) })},
		{"TRESUsageInMaxNode", 18, stat(func(s *stepStats, _ *options) string { return tres(s.maxCPU.node, s.maxRSS.node) })},
		{"TRESUsageInMaxTask", 18, stat(func(s *stepStats, _ *options) string { return tres(taskCPU(s.maxCPU.task), task(s.maxRSS.task)) })},
		{"TRESUsageInMin", 14, stat(func(s *stepStats, o *options) string { return tres(cpuClock(s.minCPU.v), mem(s.minRSS.v, o)) })},
		{"TRESUsageInMinNode", 18, stat(func(s *stepStats, _ *options) string { return tres(s.minCPU.node, s.minRSS.node) })},
		{"TRESUsageInMinTask", 18, stat(func(s *stepStats, _ *options) string { return tres(taskCPU(s.minCPU.task), task(s.minRSS.task)) })},
		{"TRESUsageInTot", 14, stat(func(s *stepStats, o *options) string { return tres(cpuClock(s.totCPU), mem(s.totRSS, o)) })},
		{"TRESUsageOutAve", 15, fixed("")},
		{"TRESUsageOutMax", 15, fixed("")},
		{"TRESUsageOutMaxNode", 19, fixed("")},
		{"TRESUsageOutMaxTask", 19, fixed("")},
		{"TRESUsageOutMin", 15, fixed("")},
		{"TRESUsageOutMinNode", 19, fixed("")},
		{"TRESUsageOutMinTask", 19, fixed("")},
		{"TRESUsageOutTot", 15, fixed("")},
	}
})

// defaultFields is the column list without -o or -i (Slurm's, names
// abbreviated as it abbreviates them).
const defaultFields = "jobid,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss," +
	"maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,avecpufreq," +
	"reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask," +
	"avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,tresusageinave,tresusageinmax," +
	"tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot," +
	"tresusageoutave,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutmin,tresusageoutminn," +
	"tresusageoutmint,tresusageouttot"

// pidFields is what -i/--pidformat adds to the list.
const pidFields = "jobid,nodelist,pids"

// column is a field as asked for, with its width (negative: left aligned).
type column struct {
	f     *field
	width int
}

// parseFields reads a field list: names, each optionally followed by
// %WIDTH (a negative width aligns left; 0 or no number keeps the
// default). An unknown name is an error worded as Slurm's.
func parseFields(list string) ([]column, error) {
	var out []column
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimLeft(item, " \t\n")
		if item == "" {
			continue
		}
		name, w, hasW := strings.Cut(item, "%")
		var f *field
		for i := range fieldList() {
			if len(name) <= len(fieldList()[i].name) && strings.EqualFold(fieldList()[i].name[:len(name)], name) {
				f = &fieldList()[i]
				break
			}
		}
		if f == nil || name == "" {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", name)
		}
		c := column{f: f, width: f.width}
		if n := atoi(w); hasW && n != 0 {
			c.width = n
		}
		out = append(out, c)
	}
	return out, nil
}

// atoi reads a leading signed number as C's atoi does: 0 when none.
func atoi(s string) int {
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// helpFields is -e: the field names, four to a line.
func helpFields() string {
	var b strings.Builder
	for i, f := range fieldList() {
		switch {
		case i%4 != 0:
			b.WriteByte(' ')
		case i > 0:
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-19s", f.name)
	}
	b.WriteByte('\n')
	return b.String()
}

// Output modes (-p, -P).
const (
	aligned = iota
	parsable
	parsable2
)

// cell appends one value as sstat prints it: padded to the column width
// and cut with a '+' when longer (the header is cut without one), or
// followed by '|' when parsable (-P leaves the last column without).
func cell(b []byte, c column, v string, last, header bool, mode int) []byte {
	if mode != aligned {
		b = append(b, v...)
		if mode == parsable || !last {
			b = append(b, '|')
		}
		return b
	}
	w := max(c.width, -c.width)
	if len(v) > w {
		if header {
			v = v[:w]
		} else {
			v = v[:max(0, w-1)] + "+"
		}
	}
	if c.width < 0 {
		b = fmt.Appendf(b, "%-*s ", w, v)
	} else {
		b = fmt.Appendf(b, "%*s ", w, v)
	}
	return b
}

// header is the column names line, and unless parsable the dashes line.
func header(cols []column, mode int) []byte {
	var b []byte
	for i, c := range cols {
		b = cell(b, c, c.f.name, i == len(cols)-1, true, mode)
	}
	b = append(b, '\n')
	if mode != aligned {
		return b
	}
	for _, c := range cols {
		b = append(b, strings.Repeat("-", max(c.width, -c.width))...)
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// line renders one row.
func line(cols []column, r *row, o *options) []byte {
	var b []byte
	for i, c := range cols {
		b = cell(b, c, c.f.value(r, o), i == len(cols)-1, false, o.mode)
	}
	return append(b, '\n')
}

// mem prints bytes as sstat prints memory: converted up by 1024 while
// exact ("2048K" stays, 2 MiB is "2M", 1.5 MiB "1.50M", an odd byte count
// stays in bytes); --noconvert keeps bytes.
func mem(bytes int64, o *options) string {
	return string(format.AppendUnits(nil, max(bytes, 0), format.UnitNone, o.noConvert))
}

// cpuClock prints CPU time (microseconds) as sstat's AveCPU and MinCPU:
// whole seconds, [D-]HH:MM:SS.
func cpuClock(us int64) string {
	s := max(us, 0) / 1e6
	d, h, m := s/86400, s%86400/3600, s%3600/60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s%60)
}

// task prints a task rank; blank when unknown.
func task(t int) string {
	if t < 0 {
		return ""
	}
	return strconv.Itoa(t)
}

// taskCPU is the cpu entry of TRESUsageIn{Max,Min}Task: Slurm runs the
// rank through its CPU time conversion (milliseconds to a clock), so any
// rank below 1000 reads 00:00:00 there.
func taskCPU(t int) string {
	if t < 0 {
		return ""
	}
	return cpuClock(int64(t) / 1000 * 1e6)
}

// tres is a usage TRES string of the two TRES Drover measures; an entry
// whose value is unknown is left out.
func tres(cpu, mem string) string {
	var parts []string
	if cpu != "" {
		parts = append(parts, "cpu="+cpu)
	}
	if mem != "" {
		parts = append(parts, "mem="+mem)
	}
	return strings.Join(parts, ",")
}
