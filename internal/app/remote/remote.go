// Package remote gives the commands their gRPC way to the controller
// (package client: TCP with TLS and a token, leader following), for the
// binaries that link gRPC: drover, and drover-cli-remote, to which the
// lean drover-cli hands the commands for a controller on another machine.
package remote

import (
	"github.com/drover-hpc/drover/client"
	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/cli"
)

// Dial connects over gRPC to the controller t names.
func Dial(t commands.Target) (cli.Client, error) {
	return client.Dial(client.Options{Socket: t.Socket, Addr: t.Addr, Backups: t.Backups, Token: t.Token, CAFile: t.CAFile})
}
