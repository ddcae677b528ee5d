// Package dbd is `drover dbd`: the accounting service on its own, so that
// the controllers of several clusters keep their job records in one
// database (Slurm's slurmdbd). By default each controller runs the same
// service in-process on its own database; a cluster uses a dbd with
// AccountingStorageType=accounting_storage/slurmdbd, AccountingStorageHost
// and AccountingStoragePort naming it, and AccountingStoragePass holding
// the key the dbd prints (its secret and its CA's fingerprint, which the
// controller pins: no munge, no shared files).
package dbd
