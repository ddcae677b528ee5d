package localwire

import (
	"encoding/binary"
	"reflect"

	"github.com/drover-hpc/drover/internal/model"
)

// A listing's message can be put together from parts, so that the
// adapter keeps each job's encoded record from one listing to the next
// (a pending job rarely changes) and a listing of 100,000 jobs is mostly
// a copy of bytes. The parts make exactly the bytes AppendCompact makes
// of the JobList (a test holds them to it); the reader is DecodeCompact.

var jobType = reflect.TypeFor[model.Job]()

// Field numbers of JobList in the compact form (its fields' index + 1).
const (
	listJobs  = 1
	listSpec  = 2
	listSpecs = 3
	listNow   = 4
)

// AppendJobRecord appends j as an element of JobList.Jobs. j.Spec must be
// nil: a listing sends the specs apart (JobList.Spec).
func AppendJobRecord(b []byte, j *model.Job) []byte {
	if j == nil {
		return append(b, 0)
	}
	return planOf(jobType).enc(append(b, 1), reflect.ValueOf(j).Elem())
}

// A listing's message is AppendJobListHead, the n records of its jobs
// (AppendJobRecord's, in order), then AppendJobListTail: the compact form
// of JobList{Jobs, Spec, Specs, Now}. spec must have n elements.

// AppendJobListHead appends what precedes n job records.
func AppendJobListHead(b []byte, n int) []byte {
	b = binary.AppendUvarint(b, listJobs)
	return binary.AppendUvarint(b, uint64(n))
}

// AppendJobListTail appends what follows the job records.
func AppendJobListTail(b []byte, spec []int, specs []*model.JobSpec, now int64) []byte {
	b = binary.AppendUvarint(b, listSpec)
	b = binary.AppendUvarint(b, uint64(len(spec)))
	for _, s := range spec {
		b = binary.AppendVarint(b, int64(s))
	}
	if specs != nil {
		b = binary.AppendUvarint(b, listSpecs)
		b = AppendCompact(b, specs)
	}
	if now != 0 {
		b = binary.AppendUvarint(b, listNow)
		b = binary.AppendVarint(b, now)
	}
	return append(b, 0)
}
