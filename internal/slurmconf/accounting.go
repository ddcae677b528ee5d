package slurmconf

// Accounting is the AccountingStorage* settings. Drover keeps accounting
// in an embedded SQLite database unless told otherwise, so Type is
// "sqlite" by default and Loc then a file (default: accounting.db in
// StateSaveLocation).
type Accounting struct {
	// Type: "sqlite", "mysql", "postgres", "slurmdbd" (a drover dbd at
	// Host:Port) or "none".
	Type string
	Host string
	Port int // 0: the backend's default
	User string
	Pass string
	// Loc is the database name (mysql, postgres) or file (sqlite).
	Loc string
	// Enforce is AccountingStorageEnforce, lower-cased.
	Enforce []string
}

// Values of AccountingStorageType, without the accounting_storage/ prefix,
// lower-cased. Slurm's own are none and slurmdbd; Drover adds the direct
// database backends (mysql as Slurm's pre-slurmdbd plugin was named).
var accountingTypes = map[string]string{
	"none":       "none",
	"slurmdbd":   "slurmdbd",
	"sqlite":     "sqlite",
	"sqlite3":    "sqlite",
	"mysql":      "mysql",
	"mariadb":    "mysql",
	"postgres":   "postgres",
	"postgresql": "postgres",
	"pgsql":      "postgres",
}

// AccountingStorageEnforce flags Slurm knows.
var enforceFlags = map[string]bool{
	"associations": true, "limits": true, "nojobs": true, "nosteps": true,
	"qos": true, "safe": true, "wckeys": true, "all": true,
}

// Enforces reports whether AccountingStorageEnforce includes flag (or
// implies it: limits, qos and safe imply associations; all is every flag
// but nojobs and nosteps).
func (a *Accounting) Enforces(flag string) bool {
	for _, f := range a.Enforce {
		switch {
		case f == flag:
			return true
		case f == "all" && flag != "nojobs" && flag != "nosteps":
			return true
		case flag == "associations" && (f == "limits" || f == "qos" || f == "safe"):
			return true
		case flag == "limits" && f == "safe":
			return true
		}
	}
	return false
}
