package controller

// The nodes backfill holds for waiting jobs' later starts are what the
// leader's last pass planned: shown by sinfo (PLANNED, "mix-") and scontrol
// show node, never committed. Like Slurm's, the flag lives in the
// controller's memory and is renewed by every pass.

func (c *Controller) setPlanned(nodes map[string]bool) {
	if len(nodes) == 0 {
		if c.planned.Load() != nil {
			c.planned.Store(nil)
		}
		return
	}
	c.planned.Store(&nodes)
}

// PlannedNodes returns the nodes the last scheduling pass holds for a
// waiting job's later start (nil: none). The map is not to be modified.
func (c *Controller) PlannedNodes() map[string]bool {
	if p := c.planned.Load(); p != nil {
		return *p
	}
	return nil
}
