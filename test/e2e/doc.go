// Package e2e holds black-box tests: they build the real drover binary,
// start clusters on this machine (drover up, or controller and agents
// separately), and drive them through the Slurm commands as users would.
//
// The tests run in parallel (t.Parallel, six at once unless -parallel
// says otherwise): most of their time is spent waiting on jobs, limits
// and restarts. Clusters side by side must not share node names, since an
// agent names its cgroups after its node: startUp gives each cluster its
// own prefix (c.node(i), c.named), and a test that writes its own
// slurm.conf picks node names no other test uses.
package e2e
