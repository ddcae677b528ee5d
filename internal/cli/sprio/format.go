package sprio

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
)

// field is one %-specifier of -o: text before the first one is a prefix,
// text after each its suffix; a '.' right-justifies, a number is the
// width (0: as wide as the value).
type field struct {
	head   string
	val    func(j *cli.JobPriority) string
	width  int
	right  bool
	suffix string
}

// maxWidth bounds a field's width (as internal/format's MaxWidth does
// the other commands').
const maxWidth = 1 << 16

// parseFormat reads sprio's -o specifiers (Slurm's letters: a/A age,
// b/B assoc, c cluster, f/F fair-share, i job id, j/J job size, n QOS
// name, N nice, o account, p/P partition factor, r partition, S site,
// q/Q QOS, u user, y/Y priority, t/T TRES; lower case normalised).
func parseFormat(info *cli.PriorityInfo, format string) (prefix string, fields []field, err error) {
	weighted := func(f func(*cli.JobPriority) float64, w uint32) func(*cli.JobPriority) string {
		return func(j *cli.JobPriority) string { return strconv.FormatFloat(f(j)*float64(w), 'f', 0, 64) }
	}
	normal := func(f func(*cli.JobPriority) float64) func(*cli.JobPriority) string {
		return func(j *cli.JobPriority) string { return strconv.FormatFloat(f(j), 'f', 7, 64) }
	}
	blank := func(*cli.JobPriority) string { return "" }
	age := func(j *cli.JobPriority) float64 { return j.Age }
	fs := func(j *cli.JobPriority) float64 { return j.FairShare }
	size := func(j *cli.JobPriority) float64 { return j.JobSize }
	part := func(j *cli.JobPriority) float64 { return j.Part }
	qos := func(j *cli.JobPriority) float64 { return j.QOS }
	zero := func(*cli.JobPriority) float64 { return 0 }
	byLetter := map[byte]field{
		'a': {head: "AGE", val: normal(age)}, 'A': {head: "AGE", val: weighted(age, info.WAge)},
		'b': {head: "ASSOC", val: normal(zero)}, 'B': {head: "ASSOC", val: weighted(zero, 0)},
		'c': {head: "CLUSTER", val: blank},
		'f': {head: "FAIRSHARE", val: normal(fs)}, 'F': {head: "FAIRSHARE", val: weighted(fs, info.WFairShare)},
		'i': {head: "JOBID", val: func(j *cli.JobPriority) string { return j.ID }},
		'j': {head: "JOBSIZE", val: normal(size)}, 'J': {head: "JOBSIZE", val: weighted(size, info.WJobSize)},
		'n': {head: "QOSNAME", val: blank},
		'N': {head: "NICE", val: func(j *cli.JobPriority) string { return strconv.Itoa(j.Nice) }},
		'o': {head: "ACCOUNT", val: blank},
		'p': {head: "PARTITION", val: normal(part)}, 'P': {head: "PARTITION", val: weighted(part, info.WPart)},
		'q': {head: "QOS", val: normal(qos)}, 'Q': {head: "QOS", val: weighted(qos, info.WQOS)},
		'r': {head: "PARTITION", val: func(j *cli.JobPriority) string { return j.Partition }},
		'S': {head: "SITE", val: func(*cli.JobPriority) string { return "0" }},
		'u': {head: "USER", val: func(j *cli.JobPriority) string { return j.User }},
		'y': {head: "PRIORITY", val: func(j *cli.JobPriority) string {
			return strconv.FormatFloat(float64(j.Priority)/math.MaxUint32, 'f', 14, 64)
		}},
		'Y': {head: "PRIORITY", val: func(j *cli.JobPriority) string { return strconv.FormatUint(uint64(j.Priority), 10) }},
		't': {head: "TRES", val: func(j *cli.JobPriority) string { return tres(j, true) }},
		'T': {head: "TRES", val: func(j *cli.JobPriority) string { return tres(j, false) }},
	}
	parts := strings.Split(format, "%")
	prefix = parts[0]
	for _, tok := range parts[1:] {
		f := field{}
		if strings.HasPrefix(tok, ".") {
			f.right, tok = true, tok[1:]
		}
		i := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			f.width = f.width*10 + int(tok[i]-'0')
			i++
			// A width of many digits would overflow, or pad every
			// line to gigabytes.
			if f.width > maxWidth {
				return "", nil, fmt.Errorf("Invalid job format specification: %s", tok)
			}
		}
		if i >= len(tok) {
			return "", nil, fmt.Errorf("Invalid job format specification: %s", tok)
		}
		known, ok := byLetter[tok[i]]
		if !ok {
			return "", nil, fmt.Errorf("Invalid job format specification: %c", tok[i])
		}
		f.head, f.val, f.suffix = known.head, known.val, tok[i+1:]
		fields = append(fields, f)
	}
	return prefix, fields, nil
}

// writeFormatted prints the header (unless noHeader) and the jobs in
// -o's layout: a value is cut to its width and padded to it.
func writeFormatted(w *bufio.Writer, prefix string, fields []field, jobs []cli.JobPriority, noHeader bool) {
	row := func(cell func(f field) string) {
		w.WriteString(prefix)
		for _, f := range fields {
			v := cell(f)
			if f.width > 0 {
				if f.right {
					v = fmt.Sprintf("%*s", f.width, v)
				}
				if len(v) > f.width {
					v = v[:f.width]
				}
				v += strings.Repeat(" ", f.width-len(v))
			}
			w.WriteString(v)
			w.WriteString(f.suffix)
		}
		w.WriteByte('\n')
	}
	if !noHeader {
		row(func(f field) string { return f.head })
	}
	for i := range jobs {
		j := &jobs[i]
		row(func(f field) string { return f.val(j) })
	}
}
