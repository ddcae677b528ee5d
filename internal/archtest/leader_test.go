package archtest

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaderLoopsStartInOnePlace: the controller's leader-only loops (its
// methods named ...Loop) are referenced only from leader.go, which starts
// them when leadership is gained and stops them when it is lost. A loop
// started anywhere else would keep running on a follower.
func TestLeaderLoopsStartInOnePlace(t *testing.T) {
	for path, f := range parsed(t, "internal/controller") {
		if filepath.Base(path) == "leader.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && strings.HasSuffix(sel.Sel.Name, "Loop") && sel.Sel.Name != "Loop" {
				t.Errorf("%s uses %s: leader-only loops are registered in controller/leader.go (leaderLoops)",
					path, sel.Sel.Name)
			}
			return true
		})
	}
}
