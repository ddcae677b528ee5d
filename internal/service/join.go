package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// Joining: an admin makes a join token (drover token create); a new machine
// presents it with a certificate request and gets its node certificate,
// the cluster CA and slurm.conf. Tokens live in the replicated state, with
// only a hash of their secret.

// DefaultTokenTTL is how long a join token lasts unless told otherwise.
const DefaultTokenTTL = 24 * time.Hour

// SetCA installs the cluster CA that signs node certificates, and the
// function that returns the cluster's slurm.conf text for joining nodes.
func (s *Service) SetCA(ca *auth.CA, confText func() (string, error)) {
	s.ca, s.confText = ca, confText
}

// MaxTokenNodes bounds the names one token may be bound to (and its
// uses), maxTokenNodesLen the expression naming them (Slurm's cap on a
// hostlist).
const (
	MaxTokenNodes    = 100000
	maxTokenNodesLen = 64 << 10
)

// CreateJoinToken makes a join token bound to node names and a number of
// joins; it returns the token and when it expires.
func (s *Service) CreateJoinToken(ctx context.Context, ts api.TokenSpec) (string, int64, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return "", 0, err
	}
	if !s.privileged(id) || id.Node != "" {
		return "", 0, errDenied
	}
	if s.ca == nil {
		return "", 0, &Error{Code: CodeUnavailable, Msg: "this controller has no cluster CA"}
	}
	uses, err := s.tokenNodes(ts)
	if err != nil {
		return "", 0, err
	}
	ttl := ts.TTL
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	now := s.clock.Now()
	sec := auth.NewJoinSecret(s.ca.Fingerprint())
	tok := &model.JoinToken{ID: sec.ID, SecretHash: auth.HashSecret(sec.Secret), Expires: now.Add(ttl).Unix(),
		Created: now.Unix(), CreatedBy: id.UID, Nodes: ts.Nodes, Uses: uses}
	if _, err := s.raft.Apply(fsm.TypeJoinToken, &fsm.JoinToken{Token: tok, Now: now.Unix()}); err != nil {
		return "", 0, errCommit(err)
	}
	return sec.String(), tok.Expires, nil
}

// tokenNodes checks a token's node names (each defined in slurm.conf, so
// that a typo shows now and not at the join) and returns its use count.
func (s *Service) tokenNodes(ts api.TokenSpec) (int, error) {
	if ts.Nodes == "" {
		return 0, invalid("a join token needs the node names it may join as (--nodes NAMES, e.g. node[01-16], or ALL)")
	}
	if len(ts.Nodes) > maxTokenNodesLen {
		return 0, invalid("node list too long")
	}
	names := 1
	if ts.Nodes != "ALL" {
		n, err := hostlist.Count(ts.Nodes)
		if err != nil {
			return 0, invalid("Invalid node name specified: " + err.Error())
		}
		if n > MaxTokenNodes {
			return 0, invalid(fmt.Sprintf("a join token may name at most %d nodes", MaxTokenNodes))
		}
		list, err := hostlist.Expand(ts.Nodes)
		if err != nil {
			return 0, invalid("Invalid node name specified: " + err.Error())
		}
		snap := s.store.Snapshot()
		for _, n := range list {
			if snap.Node(n) == nil {
				return 0, invalid("node " + n + " is not defined in the cluster's slurm.conf")
			}
		}
		names = len(list)
	}
	switch {
	case ts.Uses < 0 || ts.Uses > MaxTokenNodes:
		return 0, invalid(fmt.Sprintf("--uses must be from 1 to %d", MaxTokenNodes))
	case ts.Uses == 0:
		return names, nil
	}
	return ts.Uses, nil
}

// Join checks a join token and signs the node's certificate request. The
// join is spent through Raft before the certificate leaves: a token allows
// only the joins it was made for, whatever the race.
func (s *Service) Join(tokenID, secret, node string, csr []byte) (certPEM, caPEM []byte, conf string, err error) {
	denied := &Error{Code: CodeDenied, Msg: fsm.ErrTokenInvalid.Msg}
	snap := s.store.Snapshot()
	tok := snap.Token(tokenID)
	if tok == nil || !auth.SecretMatches(secret, tok.SecretHash) {
		return nil, nil, "", denied
	}
	now := s.clock.Now().Unix()
	if tok.Expires > 0 && now > tok.Expires {
		return nil, nil, "", denied
	}
	if err := fsm.TokenAllows(tok, node, snap.Node(node) != nil); err != nil {
		s.log.Warn("join refused", "node", node, "token", tokenID, "err", err)
		return nil, nil, "", &Error{Code: CodeDenied, Msg: err.Error()}
	}
	if s.ca == nil {
		return nil, nil, "", &Error{Code: CodeUnavailable, Msg: "this controller has no cluster CA"}
	}
	certPEM, err = s.ca.SignNode(csr, node)
	if err != nil {
		return nil, nil, "", invalid(err.Error())
	}
	if s.confText != nil {
		if conf, err = s.confText(); err != nil {
			return nil, nil, "", &Error{Code: CodeUnavailable, Msg: err.Error()}
		}
	}
	if _, err := s.raft.Apply(fsm.TypeJoinToken, &fsm.JoinToken{Use: tokenID, Node: node, Now: now}); err != nil {
		var te *fsm.TokenError
		if !errors.As(err, &te) {
			return nil, nil, "", errCommit(err)
		}
		s.log.Warn("join refused", "node", node, "token", tokenID, "err", err)
		return nil, nil, "", &Error{Code: CodeDenied, Msg: te.Msg}
	}
	s.log.Info("node joined", "node", node, "token", tokenID)
	return certPEM, s.ca.CertPEM, conf, nil
}

// ListJoinTokens lists the join tokens, newest first (admins only; the
// store keeps no secrets, only their hashes, which are not returned).
func (s *Service) ListJoinTokens(ctx context.Context) ([]*model.JoinToken, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	if !s.privileged(id) {
		return nil, errDenied
	}
	now := s.clock.Now().Unix()
	var out []*model.JoinToken
	for _, t := range s.store.Snapshot().Tokens() {
		if t.Expires > 0 && t.Expires < now {
			continue
		}
		c := t.Clone()
		c.SecretHash = ""
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *model.JoinToken) int { return cmp.Compare(b.Created, a.Created) })
	return out, nil
}

// DeleteJoinToken revokes a join token: joins with it are refused from
// then on (certificates it already made stay valid).
func (s *Service) DeleteJoinToken(ctx context.Context, tokenID string) error {
	id, err := s.Identify(ctx)
	if err != nil {
		return err
	}
	if !s.privileged(id) {
		return errDenied
	}
	if s.store.Snapshot().Token(tokenID) == nil {
		return &Error{Code: CodeNotFound, Msg: "no join token " + tokenID}
	}
	if _, err := s.raft.Apply(fsm.TypeJoinToken, &fsm.JoinToken{Delete: tokenID, Now: s.clock.Now().Unix()}); err != nil {
		return errCommit(err)
	}
	s.log.Info("join token deleted", "token", tokenID, "by", id.UID)
	return nil
}
