// Package acctmgr owns the logic of sacctmgr: the accounting configuration
// (clusters, accounts, users, associations, QOS; model.AcctDB), the
// requests that change it and the listings that show it. It is pure: the
// controller applies a Request to the replicated AcctDB and commits the
// result; the sacctmgr command parses the command line into a Request and
// formats listings.
package acctmgr
