package sstat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
)

// field is one sstat column.
type field struct {
	name  string
	width int
	left  bool // JobID and node names are left-aligned
	value func(r *row, o *options) string
}

func fixed(v string) func(*row, *options) string { return func(*row, *options) string { return v } }

var fieldList = []field{
	{"AveCPU", 10, false, func(r *row, _ *options) string { return cpuClock(perTask(r.usage.TotalCPU(), r.ntasks)) }},
	{"AveCPUFreq", 10, false, fixed("0")},
	{"AveDiskRead", 12, false, fixed("0")},
	{"AveDiskWrite", 12, false, fixed("0")},
	{"AvePages", 10, false, fixed("0")},
	{"AveRSS", 10, false, func(r *row, o *options) string { return mem(r.usage.AveRSS, o) }},
	{"AveVMSize", 10, false, fixed("0")},
	{"ConsumedEnergy", 14, false, fixed("0")},
	{"JobID", 12, true, func(r *row, _ *options) string { return fmt.Sprintf("%d.%s", r.job, r.step) }},
	{"MaxDiskRead", 12, false, fixed("0")},
	{"MaxDiskReadNode", 15, true, fixed("")},
	{"MaxDiskReadTask", 15, false, fixed("")},
	{"MaxDiskWrite", 12, false, fixed("0")},
	{"MaxDiskWriteNode", 16, true, fixed("")},
	{"MaxDiskWriteTask", 16, false, fixed("")},
	{"MaxPages", 8, false, fixed("0")},
	{"MaxPagesNode", 12, true, fixed("")},
	{"MaxPagesTask", 12, false, fixed("")},
	{"MaxRSS", 10, false, func(r *row, o *options) string { return mem(r.usage.MaxRSS, o) }},
	{"MaxRSSNode", 10, true, func(r *row, _ *options) string { return r.usage.MaxRSSNode }},
	{"MaxRSSTask", 10, false, fixed("0")},
	{"MaxVMSize", 10, false, fixed("0")},
	{"MaxVMSizeNode", 14, true, fixed("")},
	{"MaxVMSizeTask", 14, false, fixed("")},
	{"MinCPU", 10, false, func(r *row, _ *options) string { return cpuClock(perTask(r.usage.TotalCPU(), r.ntasks)) }},
	{"MinCPUNode", 10, true, func(r *row, _ *options) string { return first(r.nodes) }},
	{"MinCPUTask", 10, false, fixed("0")},
	{"NTasks", 8, false, func(r *row, _ *options) string { return strconv.Itoa(r.ntasks) }},
	{"Nodelist", 20, true, func(r *row, _ *options) string { return strings.Join(r.nodes, ",") }},
	{"Pids", 20, true, func(r *row, _ *options) string { return strings.Join(r.pids, ",") }},
	{"ReqCPUFreqMin", 13, false, fixed("Unknown")},
	{"ReqCPUFreqMax", 13, false, fixed("Unknown")},
	{"ReqCPUFreqGov", 13, false, fixed("Unknown")},
	{"SystemCPU", 10, false, func(r *row, _ *options) string { return cpuPrecise(r.usage.SystemCPU) }},
	{"TotalCPU", 10, false, func(r *row, _ *options) string { return cpuPrecise(r.usage.TotalCPU()) }},
	{"TRESUsageInAve", 14, true, func(r *row, o *options) string {
		return tres(r, o, r.usage.AveRSS, perTask(r.usage.TotalCPU(), r.ntasks))
	}},
	{"TRESUsageInMax", 14, true, func(r *row, o *options) string {
		return tres(r, o, r.usage.MaxRSS, perTask(r.usage.TotalCPU(), r.ntasks))
	}},
	{"TRESUsageInMaxNode", 18, true, func(r *row, _ *options) string { return "cpu=" + first(r.nodes) + ",mem=" + r.usage.MaxRSSNode }},
	{"TRESUsageInMaxTask", 18, true, func(r *row, _ *options) string { return "cpu=0,mem=0" }},
	{"TRESUsageInMin", 14, true, func(r *row, o *options) string {
		return tres(r, o, r.usage.AveRSS, perTask(r.usage.TotalCPU(), r.ntasks))
	}},
	{"TRESUsageInMinNode", 18, true, func(r *row, _ *options) string { return "cpu=" + first(r.nodes) + ",mem=" + first(r.nodes) }},
	{"TRESUsageInMinTask", 18, true, func(r *row, _ *options) string { return "cpu=0,mem=0" }},
	{"TRESUsageInTot", 14, true, func(r *row, o *options) string { return tres(r, o, r.usage.MaxRSS, r.usage.TotalCPU()) }},
	{"TRESUsageOutAve", 15, true, fixed("")},
	{"TRESUsageOutMax", 15, true, fixed("")},
	{"TRESUsageOutMaxNode", 19, true, fixed("")},
	{"TRESUsageOutMaxTask", 19, true, fixed("")},
	{"TRESUsageOutMin", 15, true, fixed("")},
	{"TRESUsageOutMinNode", 19, true, fixed("")},
	{"TRESUsageOutMinTask", 19, true, fixed("")},
	{"TRESUsageOutTot", 15, true, fixed("")},
	{"UserCPU", 10, false, func(r *row, _ *options) string { return cpuPrecise(r.usage.UserCPU) }},
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func perTask(us int64, tasks int) int64 { return us / int64(max(1, tasks)) }

// column is a field as asked for: its width (and alignment) may be
// changed with %N (right-aligned) or %-N (left).
type column struct {
	f     *field
	width int
	left  bool
}

func parseFields(list string) ([]column, error) {
	var out []column
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, w, hasW := strings.Cut(item, "%")
		var f *field
		for i := range fieldList {
			if strings.EqualFold(fieldList[i].name, name) {
				f = &fieldList[i]
			}
		}
		if f == nil {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", name)
		}
		c := column{f: f, width: f.width, left: f.left}
		if hasW {
			n, err := strconv.Atoi(w)
			if err != nil {
				return nil, fmt.Errorf("Invalid field width: \"%s\"", item)
			}
			c.width, c.left = n, n < 0
			if n < 0 {
				c.width = -n
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fields to print")
	}
	return out, nil
}

func printFieldNames(env *cli.Env) {
	var b strings.Builder
	for i, f := range fieldList {
		fmt.Fprintf(&b, "%-20s", f.name)
		if i%4 == 3 {
			b.WriteString("\n")
		}
	}
	if len(fieldList)%4 != 0 {
		b.WriteString("\n")
	}
	fmt.Fprint(env.Stdout, b.String())
}

type writer struct {
	cols []column
	o    *options
}

func (w *writer) render(rows []row) []byte {
	var b []byte
	delim, parsable := "|", w.o.parsable || w.o.parsable2
	cell := func(c column, v string) {
		if parsable {
			b = append(b, v...)
			return
		}
		if len(v) > c.width {
			v = v[:max(0, c.width-1)] + "+"
		}
		if c.left {
			b = fmt.Appendf(b, "%-*s ", c.width, v)
		} else {
			b = fmt.Appendf(b, "%*s ", c.width, v)
		}
	}
	sep := func(i int) {
		if parsable && (i < len(w.cols)-1 || w.o.parsable) {
			b = append(b, delim...)
		}
	}
	if !w.o.noHeader {
		for i, c := range w.cols {
			cell(c, c.f.name)
			sep(i)
		}
		b = append(b, '\n')
		if !parsable {
			for _, c := range w.cols {
				b = append(b, strings.Repeat("-", c.width)...)
				b = append(b, ' ')
			}
			b = append(b, '\n')
		}
	}
	for i := range rows {
		for k, c := range w.cols {
			cell(c, c.f.value(&rows[i], w.o))
			sep(k)
		}
		b = append(b, '\n')
	}
	return b
}

// mem prints bytes as Slurm prints memory use: in K, or converted to the
// largest unit that keeps the number at least 1 ("1.50M"); --noconvert
// keeps K.
func mem(bytes int64, o *options) string {
	if bytes <= 0 {
		return "0"
	}
	v := float64(bytes) / 1024
	units := "KMGTP"
	u := 0
	for !o.noConvert && v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d%c", int64(v), units[u])
	}
	return fmt.Sprintf("%.2f%c", v, units[u])
}

// cpuClock prints whole seconds as [D-]HH:MM:SS (AveCPU, MinCPU).
func cpuClock(us int64) string {
	s := us / 1e6
	d, h, m := s/86400, s%86400/3600, s%3600/60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s%60)
}

// cpuPrecise prints CPU time as sacct's TotalCPU does: MM:SS.mmm under
// an hour, [D-]HH:MM:SS above.
func cpuPrecise(us int64) string {
	if us < 3600*1e6 {
		return fmt.Sprintf("%02d:%02d.%03d", us/60e6, us/1e6%60, us/1000%1000)
	}
	return cpuClock(us)
}

// tres is a TRESUsageIn value: "cpu=00:00:01,mem=1.50M" (with pages and
// vmem 0, as Slurm lists them when not measured).
func tres(r *row, o *options, memBytes, cpuUs int64) string {
	return "cpu=" + cpuClock(cpuUs) + ",energy=0,fs/disk=0,mem=" + mem(memBytes, o) + ",pages=0,vmem=0"
}
