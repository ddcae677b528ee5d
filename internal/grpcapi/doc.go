// Package grpcapi adapts the gRPC services of api/drover/v1 onto the one
// API (api.Service, implemented by package service) and the node protocol
// (internal/nodeproto, onto the controller). It establishes who calls
// (Unix peer credentials, node certificate, cluster token) and hands the
// caller to the service as an api.Identity in the context; otherwise it
// only converts messages and maps errors to status codes. All decisions,
// authorisation included, live in service.
package grpcapi
