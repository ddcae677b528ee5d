// Package auth establishes who is calling a daemon, Drover's replacement for
// munge. Local callers connect through a Unix socket and the kernel tells us
// their uid/gid (SO_PEERCRED): identity is verified, never claimed. Node
// agents and remote tools on the TCP port present the cluster token, a
// random secret created with the controller's state, or a node certificate
// the cluster CA signed. This package holds the transport-free part (the CA,
// tokens, join secrets, identities of local users, nodes and token
// holders); internal/auth/grpcauth reads them off gRPC connections.
package auth
