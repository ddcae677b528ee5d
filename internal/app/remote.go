package app

import (
	"github.com/drover-hpc/drover/client"
	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/cli"
)

// dialGRPC is the full binary's way to the controller when it is not on
// this machine (or DROVER_TRANSPORT=grpc): gRPC over TCP with TLS and a
// token, following the leader. The lean binary hands such commands here.
func dialGRPC(t commands.Target) (cli.Client, error) {
	return client.Dial(client.Options{Socket: t.Socket, Addr: t.Addr, Backups: t.Backups, Token: t.Token, CAFile: t.CAFile})
}
