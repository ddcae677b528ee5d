// Package sshare is the sshare command: the fair-share tree, each
// association's shares, usage and fair-share factor, in Slurm 22.05's
// layout.
package sshare

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
)

const usageText = "Usage: sshare [-A account[,...]] [-u user[,...]] [-alnPpv]\n"

type column struct {
	head  string
	width int // negative: left-aligned
	val   func(r *cli.ShareRow) string
}

// Run is the sshare command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs, sf := cli.NewFlagSet("sshare")
	var all, long, noHeader, parsable, parsable2 bool
	var accounts, users string
	fs.BoolVarP(&all, "all", "a", false, "")
	fs.BoolVarP(&long, "long", "l", false, "")
	fs.BoolVarP(&noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&parsable, "parsable", "p", false, "")
	fs.BoolVarP(&parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&accounts, "accounts", "A", "", "")
	fs.StringVarP(&users, "users", "u", "", "")
	fs.StringP("cluster", "M", "", "")
	if code, done := cli.ParseFlags(env, fs, sf, args, usageText, usageText); done {
		return code
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	info, err := c.Priorities(ctx)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	me := ""
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	userList := split(users)
	acctList := split(accounts)
	var rows []cli.ShareRow
	for _, r := range info.Shares {
		switch {
		case len(acctList) > 0 && r.Account != "root" && !slices.Contains(acctList, r.Account):
		case r.User == "":
			rows = append(rows, r)
		case len(userList) > 0:
			if slices.Contains(userList, r.User) {
				rows = append(rows, r)
			}
		case all || r.User == me:
			rows = append(rows, r)
		}
	}
	cols := columns(long)
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	if parsable || parsable2 {
		sep := func(last bool) string {
			if last && parsable2 {
				return "\n"
			}
			if last {
				return "|\n"
			}
			return "|"
		}
		if !noHeader {
			for i, c := range cols {
				fmt.Fprint(w, c.head, sep(i == len(cols)-1))
			}
		}
		for i := range rows {
			for k, c := range cols {
				fmt.Fprint(w, strings.TrimSpace(c.val(&rows[i])), sep(k == len(cols)-1))
			}
		}
		return 0
	}
	if !noHeader {
		line(w, cols, func(c column) string { return c.head })
		line(w, cols, func(c column) string { return strings.Repeat("-", abs(c.width)) })
	}
	for i := range rows {
		line(w, cols, func(c column) string { return c.val(&rows[i]) })
	}
	return 0
}

func line(w io.Writer, cols []column, cell func(column) string) {
	var b strings.Builder
	for _, c := range cols {
		v := cell(c)
		if c.width < 0 {
			fmt.Fprintf(&b, "%-*.*s ", -c.width, -c.width, v)
		} else {
			fmt.Fprintf(&b, "%*.*s ", c.width, c.width, v)
		}
	}
	fmt.Fprintln(w, b.String())
}

func columns(long bool) []column {
	f6 := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	cols := []column{
		{"Account", -20, func(r *cli.ShareRow) string { return strings.Repeat(" ", indent(r)) + r.Account }},
		{"User", 10, func(r *cli.ShareRow) string { return r.User }},
		{"RawShares", 10, func(r *cli.ShareRow) string {
			if r.Account == "root" && r.User == "" {
				return ""
			}
			return strconv.Itoa(r.RawShares)
		}},
		{"NormShares", 11, func(r *cli.ShareRow) string { return f6(r.NormShares) }},
		{"RawUsage", 11, func(r *cli.ShareRow) string { return strconv.FormatInt(int64(math.Round(r.RawUsage)), 10) }},
	}
	if long {
		cols = append(cols, column{"NormUsage", 11, func(r *cli.ShareRow) string {
			if r.Account == "root" && r.User == "" {
				return ""
			}
			return f6(r.EffUsage)
		}})
	}
	cols = append(cols,
		column{"EffectvUsage", 13, func(r *cli.ShareRow) string { return f6(r.EffUsage) }},
		column{"FairShare", 10, func(r *cli.ShareRow) string {
			if r.User == "" {
				return ""
			}
			return f6(r.FairShare)
		}})
	if long {
		cols = append(cols, column{"LevelFS", 10, func(r *cli.ShareRow) string {
			if r.User == "" || r.EffUsage == 0 {
				return ""
			}
			return f6(r.NormShares / r.EffUsage)
		}})
	}
	return cols
}

// indent is the row's depth in the tree: a user row sits one deeper than
// its account.
func indent(r *cli.ShareRow) int { return r.Depth }

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
