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
func Override(env []string, kvs ...string) []string {
	e := newEnv(env)
	for _, kv := range kvs {
		if name, val, ok := strings.Cut(kv, "="); ok && name != "" {
			e.set(name, val)
		}
	}
	return e.list()
}

// Default returns env with each NAME=value of kvs added only where env has
// no such name: HOME and SHELL from the node's passwd entry, for instance.
func Default(env []string, kvs ...string) []string {
	e := newEnv(env)
	for _, kv := range kvs {
		if name, val, ok := strings.Cut(kv, "="); ok && name != "" {
			e.setDefault(name, val)
		}
	}
	return e.list()
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
