package fsm

import (
	"errors"

	"github.com/drover-hpc/drover/internal/state"
)

// TypeGroup is set apart from the iota list of commands.go, as TypeSlice
// is, so that commands added there never collide with it. Values are
// persisted: never reuse.
const TypeGroup Type = 65

func init() { bodies[TypeGroup] = func() any { return new(Group) } }

// Group is several commands committed as one log entry, applied in order
// in one transaction: what would have been separate entries, each with its
// own fsync, shares one write. Each command's result is its own, as if it
// had been applied alone at that point of the log (raftnode groups a
// command that may wait, such as a job's end, with the next one that
// commits).
type Group struct {
	// Entries are the commands as Encode wrote them.
	Entries [][]byte `json:"entries"`
	// held are, on the leader only, the bodies of the entries that
	// decode back to the same value (EquivalentAfterDecode): they are
	// applied without decoding their bytes again. nil elsewhere.
	held []any
}

// NewGroup builds a Group of encoded commands; bodies[i] is entries[i]'s
// body, which the leader applies directly when decoding its bytes would
// give back the same value.
func NewGroup(entries [][]byte, bodies []any) *Group {
	g := &Group{Entries: entries}
	for i, e := range entries {
		if i < len(bodies) && bodies[i] != nil && len(e) > 0 && EquivalentAfterDecode(Type(e[0]), e) {
			if g.held == nil {
				g.held = make([]any, len(entries))
			}
			g.held[i] = bodies[i]
		}
	}
	return g
}

// GroupResult is Apply's answer to a Group: each command's own result
// (an error value where that command failed), in order.
type GroupResult struct {
	Results []any
}

// errNestedGroup: a group inside a group is refused (raftnode never
// builds one).
var errNestedGroup = errors.New("a group of commands inside a group")

func (f *FSM) applyGroup(txn *state.Txn, g *Group) GroupResult {
	res := GroupResult{Results: make([]any, len(g.Entries))}
	for i, e := range g.Entries {
		var t Type
		var body any
		if g.held != nil && g.held[i] != nil {
			t, body = Type(e[0]), g.held[i]
		} else {
			var err error
			if t, body, err = Decode(e); err != nil {
				f.log.Error("skipping undecodable command in a group", "pos", i, "err", err)
				res.Results[i] = err
				continue
			}
		}
		if t == TypeGroup {
			res.Results[i] = errNestedGroup
			continue
		}
		res.Results[i] = f.apply(txn, t, body)
	}
	return res
}
