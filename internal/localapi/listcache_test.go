package localapi

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// TestListCacheSendsWhatTheListingEncodes: the cached listing is, byte for
// byte, the encoding of the listing cut anew, through a run of listings
// in which jobs change (new values), end, arrive and are asked for out of
// order — so a record kept from an earlier listing is never one whose job
// has changed since.
func TestListCacheSendsWhatTheListingEncodes(t *testing.T) {
	filled := wiretest.Filled[model.Job]()
	filled.ID, filled.Completing = 8, false // queue numbers from 1
	// The same content at another pointer shares a number.
	alike := *filled.Spec
	other := *filled.Spec
	other.Account = "other"
	jobs := queue(50)
	jobs[7] = filled
	jobs[8].Spec = &alike
	jobs[9].Spec = &other
	jobs[10].Spec = nil
	jobs[11].State = model.JobPending
	jobs[12].Suspended, jobs[12].State = true, model.JobRunning
	jobs[13].PlannedStart = 1700009999

	var c listCache
	check := func(step string, jobs []*model.Job, now int64, keep bool) {
		t.Helper()
		want, _ := localwire.Encode(listing(jobs, now, api.JobQuery{Summary: true}))
		cut, _ := c.listing(jobs, now, keep, nil)
		got := cut.whole()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the cached listing's %d bytes differ from the listing's %d", step, len(got), len(want))
		}
		var l localwire.JobList
		if err := localwire.DecodeAnswer(got, &l); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if _, err := l.API(); err != nil || len(l.Jobs) != len(jobs) {
			t.Fatalf("%s: %d jobs, %v", step, len(l.Jobs), err)
		}
	}
	check("first", jobs, 1700000000, true)
	check("again", jobs, 1700000001, true)

	// A changed job is a new value; one job ends; one arrives.
	next := append([]*model.Job(nil), jobs[:20]...)
	for _, i := range []int{3, 7, 13} {
		c := *next[i]
		c.Reason, c.Priority, c.PlannedStart = "Resources", c.Priority+1, c.PlannedStart+60
		next[i] = &c
	}
	next = append(next, jobs[21:]...)
	late := *jobs[0]
	late.ID, late.Name = 1000, "late"
	next = append(next, &late)
	check("changed", next, 1700000002, true)
	check("unchanged", next, 0, true)

	// A few named jobs, out of order: answered whole, and the queue's
	// records stay for the next listing.
	few := []*model.Job{next[30], next[2], next[7]}
	check("named", few, 1700000003, false)
	if len(c.jobs) != len(next) {
		t.Fatalf("a listing of %d named jobs replaced the cache of %d", len(few), len(c.jobs))
	}
	check("out of order, kept", few, 1700000003, true)
	check("after out of order", next, 1700000004, true)
	check("empty", nil, 1700000005, true)
	check("refilled", jobs, 1700000006, true)
}

// TestListCacheConcurrentListings: listings at once (squeue from several
// users) each get the whole listing (run with -race).
func TestListCacheConcurrentListings(t *testing.T) {
	jobs := queue(300)
	want, _ := localwire.Encode(listing(jobs, 1, api.JobQuery{Summary: true}))
	var c listCache
	errs := make(chan string, 8)
	for g := range 8 {
		go func() {
			q := jobs
			if g%2 == 1 {
				q = jobs[:100] // a shorter queue in between
			}
			for range 20 {
				cut, _ := c.listing(q, 1, true, nil)
				if got := cut.whole(); len(q) == len(jobs) && !bytes.Equal(got, want) {
					errs <- "a listing differs from the encoded one"
					return
				}
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
}

// TestListingChunks: a listing sent in chunks is, chunk after chunk, the
// jobs of the whole listing with their specs, each chunk a listing of
// its own.
func TestListingChunks(t *testing.T) {
	jobs := queue(2*chunkJobs + 5)
	other := *jobs[0].Spec
	other.Account = "other"
	for i := range jobs {
		if i%3000 == 7 {
			jobs[i].Spec = &other // a second spec in some chunks only
		}
	}
	for _, n := range []int{0, 1, chunkJobs, len(jobs)} {
		var c listCache
		var got []*model.Job
		chunks := 0
		cut, err := c.listing(jobs[:n], 1700000000, true, func(p ...[]byte) error {
			chunks++
			var l localwire.JobList
			if err := localwire.DecodeAnswer(bytes.Join(p, nil), &l); err != nil {
				return err
			}
			a, err := l.API()
			if err != nil {
				return err
			}
			if a.Now != 1700000000 {
				t.Errorf("chunk %d: now %d", chunks, a.Now)
			}
			got = append(got, a.Jobs...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var whole localwire.JobList
		if err := localwire.DecodeAnswer(cut.whole(), &whole); err != nil {
			t.Fatal(err)
		}
		want, err := whole.API()
		if err != nil {
			t.Fatal(err)
		}
		if wantChunks := max(1, (n+chunkJobs-1)/chunkJobs); chunks != wantChunks {
			t.Errorf("%d jobs: %d chunks, want %d", n, chunks, wantChunks)
		}
		if len(got) != len(want.Jobs) {
			t.Fatalf("%d jobs: the chunks hold %d", len(want.Jobs), len(got))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want.Jobs[i]) {
				t.Fatalf("%d jobs: job %d differs between the chunks and the whole listing", n, i)
			}
		}
	}
}

// TestListingOverTheSocket: the command gets the whole queue through the
// socket, in chunks (summary) or in one answer (the full listing), on
// one connection after the other.
func TestListingOverTheSocket(t *testing.T) {
	jobs := queue(2*chunkJobs + 3)
	c := serveJobs(t, jobs)
	for _, q := range []api.JobQuery{{Summary: true}, {Summary: true}, {}, {Summary: true}} {
		got, err := c.ListJobs(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var want localwire.JobList
		b, _ := localwire.Encode(listing(jobs, 1700000000, q))
		if err := localwire.DecodeAnswer(b, &want); err != nil {
			t.Fatal(err)
		}
		w, _ := want.API()
		if got.Now != w.Now || len(got.Jobs) != len(w.Jobs) {
			t.Fatalf("summary %v: %d jobs at %d, want %d at %d", q.Summary, len(got.Jobs), got.Now, len(w.Jobs), w.Now)
		}
		for i := range got.Jobs {
			if !reflect.DeepEqual(got.Jobs[i], w.Jobs[i]) {
				t.Fatalf("summary %v: job %d differs", q.Summary, i)
			}
		}
	}
}
