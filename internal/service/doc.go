// Package service is Drover's one API layer. Each call authenticates the
// caller (auth.Identity), checks permissions, validates the request against
// a state snapshot (admission), and commits changes through Raft; reads come
// from immutable snapshots. Transport adapters (grpcapi, later REST and the
// web UI) call it and add nothing but encoding.
package service
