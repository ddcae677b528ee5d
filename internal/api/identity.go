package api

import "context"

// Identity is a caller as a transport adapter established it. The
// service authorises from it and never looks at transport data.
type Identity struct {
	UID, GID uint32
	Groups   []uint32
	User     string
	// Cluster is true for callers holding the cluster token (controller
	// peers, agents started beside the controller): they act with root's
	// rights.
	Cluster bool
	// Node is the node a caller's certificate names ("" without one). A
	// node certificate is no user and no operator: it may speak the node
	// protocol as that node, nothing else (UID is NoUID).
	Node string
}

// NoUID is the uid of a caller that is no user ((uid_t)-1, which no
// account has): a node certificate.
const NoUID = ^uint32(0)

// Privileged reports whether the caller may act on every job: root, the
// configured SlurmUser, or a holder of the cluster token.
func (id *Identity) Privileged(slurmUID uint32) bool {
	if id.Node != "" {
		return false
	}
	return id.Cluster || id.UID == 0 || id.UID == slurmUID
}

type identityKey struct{}

// WithIdentity returns ctx carrying the caller's identity; adapters call
// it once they have verified the caller.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity an adapter put in ctx, or nil when
// the caller was not authenticated.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}
