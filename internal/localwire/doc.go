// Package localwire is the local transport's protocol: how a command on
// the controller's machine and the controller talk over its Unix socket
// without gRPC. Both ends import it: the adapter (internal/localapi) and
// the lean client (client/local). It links only the standard library and
// the api types, so the Slurm commands start without gRPC's and protobuf's
// package initialisation (about 1.6 ms of every command).
//
// A connection opens with Preface (the socket tells it from gRPC's HTTP/2
// preface by its first four bytes). Then the client sends one Request
// frame and reads Answer frames until one has More false; it may send the
// next request on the same connection after that. A stream (WatchJobs,
// AcctJobs) answers with More true for each chunk and is the last call on
// its connection. A frame is a 4-byte big-endian length and that many
// bytes of JSON; each side bounds the length it accepts.
//
// Encoding is encoding/json over the api and model types, with a few
// wrapper types where the model's own JSON tags leave out fields that
// commands need (a job's spec, a node's reservation flag) and where
// floats can be NaN or infinite (fair-share figures). Measured against
// encoding/gob on one job's answer in a fresh process: json decodes in
// ~25 µs where gob spends ~300 µs compiling its type descriptions, and
// gob's package init costs another ~0.13 ms; gob also drops a pointer to
// zero (a umask of 0).
package localwire
