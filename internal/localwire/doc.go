// Package localwire is the local transport's protocol: how a command on
// the controller's machine and the controller talk over its Unix socket
// without gRPC. Both ends import it: the adapter (internal/localapi) and
// the lean client (client/local). It links only the standard library and
// the api types, so the Slurm commands start without gRPC's and protobuf's
// package initialisation (about 1.6 ms of every command).
//
// A connection opens with Preface: Magic (the socket tells it from gRPC's
// HTTP/2 preface by these four bytes), Version and the Fingerprint of the
// carried types; a controller of another build refuses it with
// ErrOtherBuild, and the commands then use gRPC. Then the client sends
// one Request frame and reads Answer frames until one has More false; it
// may send the next request on the same connection after that. A stream
// (WatchJobs, AcctJobs) answers with More true for each chunk and is the
// last call on its connection. A summary job listing (squeue's) answers
// in chunks too, each a JobList of up to 8,192 jobs, so that the command
// reads one while the next arrive, several at once; the connection stays
// usable after it. A frame is a 4-byte big-endian length and
// that many bytes; each side bounds the length it accepts.
//
// Messages are the api and model types in the compact form (compact.go),
// a binary encoding driven by reflection over the types, with per-type
// plans built on first use. Measured on this machine against the
// standard library's encodings: one job with its spec, decoded in a fresh
// process, costs ~400 µs in encoding/json and ~300 µs in encoding/gob
// (plus gob's 0.13 ms of package initialisation; gob also drops a pointer
// to zero, a umask of 0), ~60-80 µs compact; a 10,000-job squeue listing
// encoded and decoded costs 240-430 ms in JSON, ~35 ms compact, ~32 ms in
// the gRPC adapter's protobuf. JSON would also have needed wrappers: the
// model leaves a job's spec and a node's flags out of its JSON, and
// fair-share figures can be NaN or infinite.
package localwire
