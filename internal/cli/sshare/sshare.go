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

	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/nss"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/stdflag"
)

const usageText = "Usage: sshare [-A account[,...]] [-u user[,...]] [-o format] [-alnPpv]\n"

type column struct {
	head  string
	width int // negative: left-aligned
	val   func(r *cli.ShareRow) string
}

// Run is the sshare command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs, sf := stdflag.New("sshare")
	var all, long, noHeader, parsable, parsable2 bool
	var accounts, users, format string
	fs.BoolVarP(&all, "all", "a", false, "")
	fs.BoolVarP(&long, "long", "l", false, "")
	fs.BoolVarP(&noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&parsable, "parsable", "p", false, "")
	fs.BoolVarP(&parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&accounts, "accounts", "A", "", "")
	fs.StringVarP(&users, "users", "u", "", "")
	fs.StringVarP(&format, "format", "o", "", "")
	fs.StringP("cluster", "M", "", "")
	if code, done := stdflag.Parse(env, fs, sf, args, usageText, usageText); done {
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
	if u, err := nss.Current(); err == nil {
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
	cols, err := columns(long, info.FairTree, format)
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
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
		line(w, cols, func(c column) string { return c.head }, false)
		line(w, cols, func(c column) string { return strings.Repeat("-", abs(c.width)) }, false)
	}
	for i := range rows {
		line(w, cols, func(c column) string { return c.val(&rows[i]) }, true)
	}
	return 0
}

// line prints one row. A header is cut to its column; in a data row a
// name too long for its column is cut with a '+' in its last place, as
// Slurm marks it, and a number is printed whole.
func line(w io.Writer, cols []column, cell func(column) string, data bool) {
	var b strings.Builder
	for _, c := range cols {
		v, n := cell(c), abs(c.width)
		if len(v) > n {
			switch {
			case !data:
				v = v[:n]
			case textColumns[c.head]:
				v = v[:n-1] + "+"
			}
		}
		if c.width < 0 {
			fmt.Fprintf(&b, "%-*s ", n, v)
		} else {
			fmt.Fprintf(&b, "%*s ", n, v)
		}
	}
	fmt.Fprintln(w, b.String())
}

// textColumns are the string fields (the rest are numbers).
var textColumns = map[string]bool{"Account": true, "User": true, "GrpTRESMins": true, "TRESRunMins": true}

// fields are sshare's columns by name, with Slurm's widths.
var fields = []column{
	{"Account", -20, func(r *cli.ShareRow) string { return strings.Repeat(" ", indent(r)) + r.Account }},
	{"EffectvUsage", 13, func(r *cli.ShareRow) string { return f6(r.EffUsage, 13) }},
	{"FairShare", 10, func(r *cli.ShareRow) string {
		if r.User == "" {
			return ""
		}
		return f6(r.FairShare, 10)
	}},
	// Drover keeps no TRES-minute limits or running totals yet: blank.
	{"GrpTRESMins", 30, func(*cli.ShareRow) string { return "" }},
	{"LevelFS", 10, func(r *cli.ShareRow) string {
		if isRoot(r) || math.IsNaN(r.LevelFS) || r.RawShares == sharesParent {
			return ""
		}
		return f6(r.LevelFS, 10)
	}},
	{"NormShares", 11, func(r *cli.ShareRow) string { return f6(r.NormShares, 11) }},
	{"NormUsage", 11, func(r *cli.ShareRow) string {
		if isRoot(r) {
			return ""
		}
		return f6(r.NormUsage, 11)
	}},
	{"RawShares", 10, func(r *cli.ShareRow) string {
		switch {
		case isRoot(r):
			return ""
		case r.RawShares == sharesParent:
			return "parent"
		}
		return strconv.Itoa(r.RawShares)
	}},
	{"RawUsage", 11, func(r *cli.ShareRow) string { return strconv.FormatInt(int64(math.Round(r.RawUsage)), 10) }},
	{"TRESRunMins", 30, func(*cli.ShareRow) string { return "" }},
	{"User", 10, func(r *cli.ShareRow) string { return r.User }},
}

// sharesParent is model.SharesParent (Fairshare=parent).
const sharesParent = 0x7fffffff

func isRoot(r *cli.ShareRow) bool { return r.Account == "root" && r.User == "" && r.Depth == 0 }

// columns are Slurm's default set, -l's (LevelFS only under Fair Tree),
// or -o's list: names matched by prefix, case-insensitively, each with an
// optional %width.
func columns(long, fairTree bool, format string) ([]column, error) {
	list := "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"
	switch {
	case format != "":
		list = format
	case long && fairTree:
		list = "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,LevelFS,GrpTRESMins,TRESRunMins"
	case long:
		list = "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,GrpTRESMins,TRESRunMins"
	}
	var cols []column
	for _, item := range strings.Split(list, ",") {
		name, width, hasWidth := strings.Cut(strings.TrimSpace(item), "%")
		found := false
		for _, f := range fields {
			if name != "" && len(name) <= len(f.head) && strings.EqualFold(f.head[:len(name)], name) {
				if hasWidth {
					if n, err := strconv.Atoi(width); err == nil && n != 0 {
						f.width = n
					}
				}
				cols = append(cols, f)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", name)
		}
	}
	return cols, nil
}

// f6 is Slurm's double: %f, or in scientific notation when that would
// not fit the column; infinity is "inf".
func f6(v float64, width int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsNaN(v):
		return ""
	}
	s := strconv.FormatFloat(v, 'f', 6, 64)
	if len(s) <= width {
		return s
	}
	w := width
	if e := fmt.Sprintf("%.*e", w, v); len(e) > w {
		w -= len(e) - w
	}
	return fmt.Sprintf("%.*e", max(0, w), v)
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
