package service

import (
	"context"
	"time"

	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/fsm"
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

// CreateJoinToken makes a join token; ttl <= 0 means DefaultTokenTTL.
func (s *Service) CreateJoinToken(ctx context.Context, ttl time.Duration) (string, int64, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return "", 0, err
	}
	if !s.privileged(id) || id.Node != "" {
		return "", 0, errDenied
	}
	if s.ca == nil {
		return "", 0, &Error{CodeUnavailable, "this controller has no cluster CA"}
	}
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	now := s.clock.Now()
	sec := auth.NewJoinSecret(s.ca.Fingerprint())
	tok := &model.JoinToken{ID: sec.ID, SecretHash: auth.HashSecret(sec.Secret), Expires: now.Add(ttl).Unix(),
		Created: now.Unix(), CreatedBy: id.UID}
	if _, err := s.raft.Apply(fsm.TypeJoinToken, &fsm.JoinToken{Token: tok, Now: now.Unix()}); err != nil {
		return "", 0, errCommit(err)
	}
	return sec.String(), tok.Expires, nil
}

// Join checks a join token and signs the node's certificate request.
func (s *Service) Join(tokenID, secret, node string, csr []byte) (certPEM, caPEM []byte, conf string, err error) {
	denied := &Error{CodeDenied, "invalid or expired join token"}
	tok := s.store.Snapshot().Token(tokenID)
	if tok == nil || !auth.SecretMatches(secret, tok.SecretHash) {
		return nil, nil, "", denied
	}
	if tok.Expires > 0 && s.clock.Now().Unix() > tok.Expires {
		return nil, nil, "", denied
	}
	if s.store.Snapshot().Node(node) == nil {
		return nil, nil, "", invalid("node " + node + " is not defined in the cluster's slurm.conf")
	}
	if s.ca == nil {
		return nil, nil, "", &Error{CodeUnavailable, "this controller has no cluster CA"}
	}
	certPEM, err = s.ca.SignNode(csr, node)
	if err != nil {
		return nil, nil, "", invalid(err.Error())
	}
	if s.confText != nil {
		if conf, err = s.confText(); err != nil {
			return nil, nil, "", &Error{CodeUnavailable, err.Error()}
		}
	}
	s.log.Info("node joined", "node", node, "token", tokenID)
	return certPEM, s.ca.CertPEM, conf, nil
}
