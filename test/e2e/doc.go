// Package e2e holds black-box tests: they build the real drover binary,
// start clusters on this machine (drover up, or controller and agents
// separately), and drive them through the Slurm commands as users would.
package e2e
