// Package service is Drover's one API layer: it implements api.Service.
// Each call takes the caller's identity from the context (api.IdentityFrom,
// put there by the transport adapter that verified it), checks permissions,
// validates the request against a state snapshot (admission), and commits
// changes through Raft; reads come from immutable snapshots. Transport
// adapters (grpcapi, later REST and the web UI) call it through api.Service
// and add nothing but authentication and encoding; nothing here imports a
// transport (grpc, api/drover/v1).
package service
