package acctmgr

import "github.com/drover-hpc/drover/internal/model"

// A setting is one key sacctmgr takes when it sets something on a T (an
// association's limits, a QOS): its spellings, and how its value is read.
// Each entity has one table of them, in the order sacctmgr tries its keys
// (a word may abbreviate several: the first wins), and one lookup reads
// any of them; the value readers below are shared, so a limit is read,
// and refused, in the same words on every entity.
type setting[T any] struct {
	words []word
	set   func(db *model.AcctDB, dst *T, kv KeyValue) error // nil: a Slurm key Drover does not keep
}

// lookupSetting reads kv by the first setting of table it names; false
// when it names none.
func lookupSetting[T any](table []setting[T], db *model.AcctDB, dst *T, kv KeyValue) (bool, error) {
	for _, s := range table {
		if !matchAny(kv.Key, s.words...) {
			continue
		}
		if s.set == nil {
			return false, &Error{unsupportedOption(kv.Key)}
		}
		if err := s.set(db, dst, kv); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// setCount reads a count (what names it in errors; -1 clears).
func setCount[T any](what string, field func(*T) **int) func(*model.AcctDB, *T, KeyValue) error {
	return func(_ *model.AcctDB, dst *T, kv KeyValue) error {
		n, err := parseCount(kv.Value, what)
		if err != nil {
			return &Error{err.Error() + unknownOption(kv.String())}
		}
		*field(dst) = &n
		return nil
	}
}

// setWall reads a time limit.
func setWall[T any](what string, field func(*T) **int64) func(*model.AcctDB, *T, KeyValue) error {
	return func(_ *model.AcctDB, dst *T, kv KeyValue) error {
		secs, ok := parseDuration(kv.Value)
		if !ok {
			tok := kv.String()
			return &Error{" Bad " + what + " time format: " + tok + "\n" + unknownOption(tok)}
		}
		*field(dst) = &secs
		return nil
	}
}

// setTRES reads a TRES list into the ones already given.
func setTRES[T any](field func(*T) *model.TRES) func(*model.AcctDB, *T, KeyValue) error {
	return func(_ *model.AcctDB, dst *T, kv KeyValue) error {
		t, err := parseTRES(kv.Key, kv.Value)
		if err != nil {
			return err
		}
		m := field(dst)
		if *m == nil {
			*m = model.TRES{}
		}
		for name, n := range t {
			(*m)[name] = n
		}
		return nil
	}
}

// setOneTRES reads a count of one TRES, the old spelling of a TRES limit
// (GrpCPUs, MaxNodesPerJob, ...).
func setOneTRES[T any](name, what string, field func(*T) *model.TRES) func(*model.AcctDB, *T, KeyValue) error {
	return func(_ *model.AcctDB, dst *T, kv KeyValue) error {
		n, err := parseCount(kv.Value, what)
		if err != nil {
			return &Error{err.Error() + unknownOption(kv.String())}
		}
		m := field(dst)
		if *m == nil {
			*m = model.TRES{}
		}
		(*m)[name] = int64(n)
		return nil
	}
}
