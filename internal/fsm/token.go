package fsm

import (
	"fmt"
	"slices"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// ErrTokenInvalid is a join with a token that does not exist (or expired).
var ErrTokenInvalid = &TokenError{"invalid or expired join token"}

// TokenError is a join a token does not allow, in words for the admin.
type TokenError struct{ Msg string }

func (e *TokenError) Error() string { return e.Msg }

func tokenErr(format string, a ...any) error { return &TokenError{fmt.Sprintf(format, a...)} }

func applyJoinToken(txn *state.Txn, c *JoinToken) error {
	if c.Use != "" {
		return useJoinToken(txn, c)
	}
	for _, t := range txn.Snapshot().Tokens() {
		if t.ID == c.Delete || (t.Expires > 0 && t.Expires < c.Now) {
			txn.DeleteToken(t.ID)
		}
	}
	if c.Token != nil {
		txn.PutToken(c.Token)
	}
	return nil
}

// useJoinToken spends one join of a token for a node.
func useJoinToken(txn *state.Txn, c *JoinToken) error {
	snap := txn.Snapshot()
	t := snap.Token(c.Use)
	if t == nil || (t.Expires > 0 && t.Expires < c.Now) {
		return ErrTokenInvalid
	}
	if err := TokenAllows(t, c.Node, snap.Node(c.Node) != nil); err != nil {
		return err
	}
	u := t.Clone()
	u.Joined = append(u.Joined, c.Node)
	txn.PutToken(u)
	return nil
}

// TokenAllows says whether token t may make a certificate for node (known:
// node is defined in the cluster), and if not, why, in words for the
// joining admin.
func TokenAllows(t *model.JoinToken, node string, known bool) error {
	if !known {
		return tokenErr("node %s is not defined in the cluster's slurm.conf", node)
	}
	if len(t.Joined) >= t.MaxUses() {
		return tokenErr("join token %s is used up (%d of %d joins): make a new one with `drover token create`", t.ID, len(t.Joined), t.MaxUses())
	}
	if slices.Contains(t.Joined, node) {
		return tokenErr("node %s already joined with token %s: make a new token to join it again", node, t.ID)
	}
	if t.Nodes == "" || t.Nodes == "ALL" {
		return nil
	}
	names, err := hostlist.Expand(t.Nodes)
	if err != nil || !slices.Contains(names, node) {
		return tokenErr("join token %s is for nodes %s, not %s", t.ID, t.Nodes, node)
	}
	return nil
}
