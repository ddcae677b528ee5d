// Package client is the Go client of the controller API over gRPC, used by
// the full binary's commands (for a controller on another machine, or with
// DROVER_TRANSPORT=grpc), tests and (later) the REST adapter; the lean
// commands' binary uses client/local instead. It dials the controller's
// Unix socket when it is on this machine — the kernel then vouches for the
// caller — or the TCP port with a token, and turns gRPC statuses back into
// errors that carry Slurm's wording.
//
// Like Slurm's commands with several SlurmctldHost lines, it tries the
// other controllers in order when the one dialled cannot be reached, and a
// change that a follower refuses is made once more on the leader it names
// (one redirect per call, never a loop).
package client
