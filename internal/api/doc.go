// Package api is Drover's one typed API: the request and answer types of
// every user and admin call, the errors they end in, the caller's identity
// as a plain value in the context, and the Service interface that
// internal/service implements on the controller and package client
// implements over gRPC.
//
// Transports are thin adapters over it: the gRPC adapter (internal/grpcapi)
// establishes who calls (Unix peer credentials, node certificate, token),
// puts an Identity in the context and translates protobuf to these types;
// a REST adapter would do the same from HTTP. The service authorises from
// the Identity alone. This package must not import the protobuf package
// (api/drover/v1), grpc, or any server package: only the model and the
// accounting types it names.
package api
