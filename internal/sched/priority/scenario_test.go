package priority

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

var update = flag.Bool("update", false, "rewrite the golden sections of testdata scenarios")

// TestFairTreeScenarios runs testdata/fairtree/*.txt: an association tree
// with usage, above a "----" line, and below it the tree Fair Tree makes
// of it (S, U, LevelFS, and each user's rank and FairShare). Lines:
//
//	account PARENT/NAME SHARES     (SHARES may be "parent")
//	user ACCOUNT/NAME SHARES [USAGE]
//
// go test ./internal/sched/priority -run Scenarios -update rewrites what
// is below the line; read the diff before committing it.
func TestFairTreeScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/fairtree/*.txt")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, _ := strings.Cut(string(b), "----\n")
			db, usage, err := parseScenario(file, input)
			if err != nil {
				t.Fatal(err)
			}
			tr := NewTree(db, "c", usage)
			tr.Finish()
			tr.FairTree()
			got := renderTree(tr)
			if *update {
				if err := os.WriteFile(file, []byte(input+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: got\n%swant\n%s", file, got, want)
			}
		})
	}
}

func parseScenario(file, text string) (*model.AcctDB, map[string]float64, error) {
	db := &model.AcctDB{Assocs: []*model.Assoc{model.NewAssoc("c", "root", "", "")}}
	usage := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("%s:%d: %s", file, n, why) }
		if len(f) < 3 {
			return nil, nil, bad("want KIND PARENT/NAME SHARES [USAGE]")
		}
		parent, name, ok := strings.Cut(f[1], "/")
		if !ok {
			return nil, nil, bad("want PARENT/NAME")
		}
		shares := model.SharesParent
		if f[2] != "parent" {
			v, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, nil, bad("shares: " + err.Error())
			}
			shares = v
		}
		switch f[0] {
		case "account":
			a := model.NewAssoc("c", name, "", "")
			a.Parent, a.Shares = parent, shares
			db.Assocs = append(db.Assocs, a)
		case "user":
			a := model.NewAssoc("c", parent, name, "")
			a.Shares = shares
			db.Assocs = append(db.Assocs, a)
			if len(f) > 3 {
				u, err := strconv.ParseFloat(f[3], 64)
				if err != nil {
					return nil, nil, bad("usage: " + err.Error())
				}
				usage[UsageKey(parent, name)] = u
			}
		default:
			return nil, nil, bad("unknown kind " + f[0])
		}
	}
	return db, usage, nil
}

// renderTree is sshare -l's view: indentation, S, U, LevelFS, and for
// users rank/users and FairShare.
func renderTree(t *Tree) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %8s %8s %9s %s\n", "assoc", "S", "U", "LevelFS", "rank FairShare")
	t.Walk(func(n *Node, depth int) {
		if n == t.Root {
			return
		}
		name := n.Account
		if n.IsUser() {
			name = n.User
		}
		lf := strconv.FormatFloat(n.LevelFS, 'f', 4, 64)
		if math.IsInf(n.LevelFS, 1) {
			lf = "inf"
		}
		fmt.Fprintf(&b, "%-16s %8.4f %8.4f %9s", strings.Repeat("  ", depth-1)+name, n.NormShares, n.EffUsage, lf)
		if n.IsUser() {
			fmt.Fprintf(&b, " %d/%d %.4f", int(math.Round(n.FairShare*float64(t.Users()))), t.Users(), n.FairShare)
		}
		b.WriteString("\n")
	})
	return b.String()
}
