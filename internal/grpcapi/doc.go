// Package grpcapi adapts the gRPC services of api/drover/v1 onto package
// service (user calls) and package controller (agent streams). It only
// converts messages and maps errors to status codes; all decisions live in
// service.
package grpcapi
