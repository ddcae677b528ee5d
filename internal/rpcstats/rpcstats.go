// Package rpcstats counts the controller's calls by method and by caller:
// sdiag's "Remote Procedure Call statistics". The transport adapters
// (gRPC, the local socket) record into one Stats, so sdiag shows every
// call whichever way it came.
package rpcstats

import (
	"sort"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/api"
)

// Stats is safe for concurrent use.
type Stats struct {
	mu     sync.Mutex
	byType map[string]*api.RPCStat
	byUser map[uint32]*api.RPCStat
}

// New returns empty counters.
func New() *Stats {
	return &Stats{byType: map[string]*api.RPCStat{}, byUser: map[uint32]*api.RPCStat{}}
}

// Record counts one call of method by id (nil: an unidentified caller,
// counted by method only) that took d.
func (r *Stats) Record(method string, id *api.Identity, d time.Duration) {
	us := d.Microseconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.byType[method]
	if m == nil {
		m = &api.RPCStat{Name: method}
		r.byType[method] = m
	}
	m.Count++
	m.TotalUs += us
	if id != nil {
		u := r.byUser[id.UID]
		if u == nil {
			u = &api.RPCStat{Name: id.User, UID: id.UID}
			r.byUser[id.UID] = u
		}
		u.Count++
		u.TotalUs += us
	}
}

// Reset clears the counters (sdiag --reset).
func (r *Stats) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byType, r.byUser = map[string]*api.RPCStat{}, map[uint32]*api.RPCStat{}
}

// Snapshot lists the counters, most called first as sdiag sorts them.
func (r *Stats) Snapshot() (byType, byUser []api.RPCStat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.byType {
		byType = append(byType, api.RPCStat{Name: m.Name, Count: m.Count, TotalUs: m.TotalUs})
	}
	for _, u := range r.byUser {
		byUser = append(byUser, *u)
	}
	order := func(s []api.RPCStat) {
		sort.Slice(s, func(a, b int) bool {
			if s[a].Count != s[b].Count {
				return s[a].Count > s[b].Count
			}
			return s[a].Name < s[b].Name
		})
	}
	order(byType)
	order(byUser)
	return byType, byUser
}
