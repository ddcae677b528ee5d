package sched

// SetPlainSearch turns the backfill search's shortcuts off (on = false) or
// back on, for tests that compare plans made both ways.
func SetPlainSearch(plain bool) { plainSearch = plain }

// SetPlainTwins turns the copied verdicts of twin jobs (twin.go) off or
// back on, for tests that compare plans made both ways.
func SetPlainTwins(plain bool) { plainTwins = plain }
