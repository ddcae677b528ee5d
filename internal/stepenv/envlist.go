package stepenv

import "strings"

// env is an ordered NAME=value list with unique names. Replacing a value
// keeps the variable's first position, so the result reads like the input
// with Slurm's variables appended.
type env struct {
	names []string // in order of first appearance; "" marks a removed slot
	vals  map[string]string
	pos   map[string]int
}

// newEnv loads base; a later duplicate wins, entries without '=' (or with
// an empty name) are dropped since nothing could look them up.
func newEnv(base []string) *env {
	e := &env{vals: make(map[string]string, len(base)+64), pos: make(map[string]int, len(base)+64)}
	for _, kv := range base {
		name, val, ok := strings.Cut(kv, "=")
		if ok && name != "" {
			e.set(name, val)
		}
	}
	return e
}

func (e *env) set(name, val string) {
	if _, ok := e.pos[name]; !ok {
		e.pos[name] = len(e.names)
		e.names = append(e.names, name)
	}
	e.vals[name] = val
}

func (e *env) setDefault(name, val string) {
	if _, ok := e.vals[name]; !ok {
		e.set(name, val)
	}
}

func (e *env) unset(name string) {
	if i, ok := e.pos[name]; ok {
		e.names[i] = ""
		delete(e.pos, name)
		delete(e.vals, name)
	}
}

func (e *env) list() []string {
	out := make([]string, 0, len(e.vals))
	for _, n := range e.names {
		if n != "" {
			out = append(out, n+"="+e.vals[n])
		}
	}
	return out
}

// Override returns env with each NAME=value of kvs set, replacing earlier
// values of the same name in place; names stay unique. For what the agent
// adds on top of BatchEnv (SLURM_CONF, GPU variables).
func Override(env []string, kvs ...string) []string { return merge(env, kvs, true) }

// Default returns env with each NAME=value of kvs added only where env has
// no such name: HOME and SHELL from the node's passwd entry, for instance.
func Default(env []string, kvs ...string) []string { return merge(env, kvs, false) }

// merge is env with its names made unique (a name keeps its first place
// and its last value), then kvs set (replace) or added where missing. The
// entries are env's own strings: one index, no map of values and no string
// built per variable (every launch runs it two or three times over the
// user's whole environment).
func merge(env, kvs []string, replace bool) []string {
	out := make([]string, 0, len(env)+len(kvs))
	at := make(map[string]int, len(env)+len(kvs))
	put := func(kv string, replace bool) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return
		}
		if i, ok := at[name]; ok {
			if replace {
				out[i] = kv
			}
			return
		}
		at[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range env {
		put(kv, true)
	}
	for _, kv := range kvs {
		put(kv, replace)
	}
	return out
}

// Lookup returns the value of name in env (the last one, if repeated).
func Lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}
