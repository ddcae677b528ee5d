// Package features parses and evaluates job constraints (--constraint,
// scontrol update Features=) against node features (Feature= on NodeName
// lines). It is a leaf: jobspec validates with it at submit, the service on
// update, and the scheduler narrows a job's candidate nodes with it.
//
// The grammar is Slurm's, minus resource counts: a feature name, `&` (or
// `,`) for AND, `|` for OR, parentheses for grouping, AND binding tighter
// than OR. Brackets (Slurm's matching OR: every node the same alternative)
// are accepted and evaluated as plain grouping, which agrees with Slurm for
// one-node jobs. Counts (`gpu*2`) are refused rather than ignored.
package features
