// Package localapi is the controller's local transport: the one API
// (api.Service) over the Unix socket without gRPC, for the Slurm commands
// on the controller's machine. Like internal/grpcapi it establishes who
// calls — the kernel's word (SO_PEERCRED) on the socket — puts an
// api.Identity in the context, converts and maps errors; every decision,
// authorisation included, stays in the service. The protocol is
// internal/localwire's; the client is client/local.
//
// It shares the socket with gRPC: Split peeks at each new connection's
// first bytes and hands gRPC's (the HTTP/2 preface) on, so clients need no
// second path and the per-user connection cap counts both. What it bounds:
// a connection's first bytes and each message arrive within the I/O
// timeout, an idle connection is closed, answers are written within the
// I/O timeout (a client that never reads loses its connection), frames
// have a maximum size, decoding one allocates at most
// localwire.RequestAlloc of it, one user's requests in flight hold at most
// Limits.PerUserMemory (others wait, then are refused with try again),
// and a malformed frame ends the connection with an error answer.
package localapi
