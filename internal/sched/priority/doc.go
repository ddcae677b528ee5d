// Package priority computes Slurm's multifactor job priority
// (PriorityType=priority/multifactor) and its fair-share factor, by Fair
// Tree (the default) or the classic formula (PriorityFlags=NO_FAIR_TREE).
// It is pure: a function of the job, the weights, the cluster's shape,
// the usage already recorded and a clock value, so the controller, sprio,
// sshare and the simulator compute the same numbers.
//
// A job's priority is the weighted sum of factors between 0 and 1:
//
//	age·WeightAge + fairshare·WeightFairshare + jobsize·WeightJobSize
//	+ partition·WeightPartition + qos·WeightQOS + Σ tres·WeightTRES - nice
//
// where age is the time since the job became eligible over PriorityMaxAge
// (capped at 1), jobsize averages the job's share of the cluster's nodes
// and CPUs (or of what is left with PriorityFavorSmall), partition is the
// partition's PriorityJobFactor over the largest one, qos the QOS's
// Priority over the largest one (NO_NORMAL_PART, NO_NORMAL_QOS: the raw
// values), tres each weighted TRES the job asks for over its partition's
// total (NO_NORMAL_TRES: the raw count), and fairshare the association's
// Fair Tree rank (see Tree.FairTree) or classic 2^(-usage/shares) (see
// Shares).
//
// Files: priority.go the factors and the classic formula (Shares),
// fairtree.go the association Tree and Fair Tree's ranking, tres.go
// PriorityWeightTRES and TRESBillingWeights, reset.go
// PriorityUsageResetPeriod's values (the calendar arithmetic lives in the
// service: this package does not import time). It must not read state,
// clocks or configuration files: callers pass all of it in.
package priority
