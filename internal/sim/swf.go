package sim

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Job is one trace job as the simulator uses it.
type Job struct {
	ID     int   // the trace's job number
	Submit int64 // seconds from the trace's start
	Run    int64 // actual run time, seconds
	Procs  int   // the larger of requested and allocated processors
	Limit  int64 // requested time, seconds; the actual run time when the trace has none
	User   int   // trace user id, -1 when unknown
}

// Trace is a parsed SWF file.
type Trace struct {
	Jobs []Job
	// MaxProcs is the machine size from the header (MaxProcs, else
	// MaxNodes), 0 when the header has neither.
	MaxProcs int
	// Skipped counts jobs left out: no processors, or a run time of 0.
	Skipped int
}

// maxLine bounds one SWF line: the 18 fields are numbers.
const maxLine = 64 << 10

// ReadFile reads an SWF trace, gunzipping it when the name ends in .gz.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return Parse(r, path)
}

// Parse reads SWF text; errors name the file and line.
func Parse(r io.Reader, name string) (*Trace, error) {
	t := &Trace{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(text, ";"); ok {
			t.header(rest)
			continue
		}
		f := strings.Fields(text)
		if len(f) != 18 {
			return nil, fmt.Errorf("%s:%d: want 18 fields, got %d", name, line, len(f))
		}
		var v [18]int64
		for i, s := range f {
			n, err := strconv.ParseFloat(s, 64)
			if err != nil || n != n || n > 1e15 || n < -1e15 {
				return nil, fmt.Errorf("%s:%d: field %d: %q is not a number", name, line, i+1, s)
			}
			v[i] = int64(n)
		}
		// As the RLScheduler and most trace studies read SWF: processors
		// are the larger of requested and allocated; an unrecorded run time
		// (-1) counts as 10 s; jobs that ran 0 s or on no processor are left
		// out; no requested time means the run time.
		j := Job{ID: int(v[0]), Submit: v[1], Run: v[3], Procs: int(max(v[7], v[4])), Limit: v[8], User: int(v[11])}
		if j.Submit < 0 {
			return nil, fmt.Errorf("%s:%d: negative submit time %d", name, line, j.Submit)
		}
		if j.Run < 0 {
			j.Run = 10
		}
		if j.Procs <= 0 || j.Run == 0 {
			t.Skipped++
			continue
		}
		if j.Limit <= 0 {
			j.Limit = j.Run
		}
		t.Jobs = append(t.Jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return t, nil
}

func (t *Trace) header(h string) {
	key, val, ok := strings.Cut(strings.TrimSpace(h), ":")
	if !ok {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if err != nil || n <= 0 {
		return
	}
	switch strings.TrimSpace(key) {
	case "MaxProcs":
		t.MaxProcs = n
	case "MaxNodes":
		if t.MaxProcs == 0 {
			t.MaxProcs = n
		}
	}
}
