package service

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/features"
)

// checkFeatures refuses a --constraint that does not parse or names a
// feature no node of the partition has, with Slurm's words for both.
func checkFeatures(expr string, nodes []*model.Node) error {
	e, err := features.Parse(expr)
	if err != nil {
		return invalid(err.Error())
	}
	for _, name := range e.Names() {
		if !slices.ContainsFunc(nodes, func(n *model.Node) bool { return slices.Contains(n.Features, name) }) {
			return invalid(features.ErrInvalid.Error())
		}
	}
	return nil
}
