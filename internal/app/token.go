package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/app/commands"
)

const tokenUsage = `usage: drover token create --nodes NAMES|ALL [--uses N] [--ttl 24h]
       drover token list
       drover token delete ID`

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenCmd is `drover token create|list|delete`: join tokens (admins).
func tokenCmd(args []string) int {
	fs := pflag.NewFlagSet("token", pflag.ContinueOnError)
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token lasts")
	nodes := fs.String("nodes", "", "the node names the token may join as (hostlist, e.g. node[01-16], or ALL)")
	uses := fs.Int("uses", 0, "how many joins it allows (default: one per name, one for ALL)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sub := fs.Arg(0)
	switch {
	case sub == "create" && fs.NArg() == 1 && *nodes != "":
	case sub == "list" && fs.NArg() == 1:
	case sub == "delete" && fs.NArg() == 2:
	default:
		fmt.Fprintln(os.Stderr, tokenUsage)
		return 2
	}
	c, err := commands.Dial()
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
		return 1
	}
	defer c.Close()
	tc, ok := c.(api.JoinTokens)
	if !ok {
		fmt.Fprintln(os.Stderr, "drover token: not supported by this client")
		return 1
	}
	ctx := context.Background()
	switch sub {
	case "create":
		tok, exp, err := tc.CreateJoinToken(ctx, api.TokenSpec{TTL: *ttl, Nodes: *nodes, Uses: *uses})
		if err != nil {
			fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
			return 1
		}
		fmt.Println(tok)
		addr := commands.ControllerAddr()
		if addr == "" {
			addr = "HOST:PORT"
		}
		fmt.Fprintf(os.Stderr, "for nodes %s, expires %s; on each new machine:\n  drover agent --join %s --controller %s [--name NODE]\n",
			*nodes, time.Unix(exp, 0).Format(time.RFC3339), tok, addr)
		if host, _, err := net.SplitHostPort(addr); err == nil && isLoopback(host) {
			fmt.Fprintf(os.Stderr, "  (%s is slurm.conf's SlurmctldHost address, reachable from this machine only: other machines need one of its network addresses)\n", host)
		}
	case "list":
		toks, err := tc.ListJoinTokens(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
			return 1
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tNODES\tUSED\tEXPIRES\tJOINED")
		for _, t := range toks {
			nodes := t.Nodes
			if nodes == "" {
				nodes = "ALL"
			}
			joined := strings.Join(t.Joined, ",")
			if joined == "" {
				joined = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%s\n", t.ID, nodes, len(t.Joined), t.Uses,
				time.Unix(t.Expires, 0).Format("2006-01-02T15:04:05"), joined)
		}
		_ = w.Flush()
	case "delete":
		if err := tc.DeleteJoinToken(ctx, fs.Arg(1)); err != nil {
			fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
			return 1
		}
	}
	return 0
}
