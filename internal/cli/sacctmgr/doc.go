// Package sacctmgr is the sacctmgr command: it lists and changes the
// accounting configuration (clusters, accounts, users, associations and
// their limits, QOS) with Slurm 22.05's words, options, listing columns
// and widths, and the texts it prints about changes.
//
// The logic is package acctmgr's: this package reads the command line,
// turns a change into an acctmgr.Request and sends it to the controller,
// which applies it to the replicated configuration. A change goes in two
// steps, as in Slurm: the controller first only describes it, sacctmgr
// prints the description and asks "Would you like to commit changes?",
// then asks for the commit. With -i it commits at once. The answer is
// read from stdin whether or not it is a terminal, as Slurm does: a
// piped "y" commits, while the end of input, "n", Enter or 30 seconds
// without an answer discard the change (" Changes Discarded").
//
// Errors are printed as sacctmgr prints them (most lines start with a
// space and name no program); the exit status is 1 (SLURM_EXIT_ERROR)
// when the command failed or changed nothing. Without a command,
// sacctmgr reads commands from stdin after a "sacctmgr: " prompt.
//
// What Drover does not keep (coordinators, WCKeys, federations, TRES
// minutes limits, GrpWall of QOS, ...) is refused by name, and listed as
// blank columns. Where Slurm and this package differ, see acctmgr's
// doc.go.
package sacctmgr
