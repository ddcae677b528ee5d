// Package wire converts between the domain model (package model) and the
// generated protobuf messages of api/drover/v1. It is the only place that
// knows both shapes, so the CLI and the server each see just one of them.
package wire
