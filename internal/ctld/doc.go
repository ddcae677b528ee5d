// Package ctld is the controller process: it loads slurm.conf, opens the
// replicated state, and serves the API on the Unix socket (local users) and
// the TCP port (agents and token holders) until told to stop.
package ctld
