package features

import (
	"errors"
	"slices"
	"strings"
)

// ErrInvalid is Slurm's answer to a constraint it cannot use.
var ErrInvalid = errors.New("Invalid feature specification")

// MaxLen bounds a constraint expression (Slurm's cap on string fields).
const MaxLen = 1024

// Expr is a parsed constraint. The zero value (and nil) matches every node.
type Expr struct {
	// or of ands: the expression in disjunctive form would blow up for
	// nested groups, so keep the tree.
	op   byte // 0 leaf, '&', '|'
	name string
	kids []*Expr
}

// Parse parses s; "" gives nil (no constraint).
func Parse(s string) (*Expr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxLen {
		return nil, ErrInvalid
	}
	p := &parser{s: s}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, ErrInvalid
	}
	return e, nil
}

type parser struct {
	s     string
	i     int
	depth int
}

func (p *parser) peek() byte {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	if p.i == len(p.s) {
		return 0
	}
	return p.s[p.i]
}

func (p *parser) or() (*Expr, error) {
	return p.list('|', p.and)
}

func (p *parser) and() (*Expr, error) {
	return p.list('&', p.atom)
}

// list parses next (op next)*, ',' counting as '&'.
func (p *parser) list(op byte, next func() (*Expr, error)) (*Expr, error) {
	first, err := next()
	if err != nil {
		return nil, err
	}
	kids := []*Expr{first}
	for {
		c := p.peek()
		if c != op && (op != '&' || c != ',') {
			break
		}
		p.i++
		k, err := next()
		if err != nil {
			return nil, err
		}
		kids = append(kids, k)
	}
	if len(kids) == 1 {
		return first, nil
	}
	return &Expr{op: op, kids: kids}, nil
}

func (p *parser) atom() (*Expr, error) {
	switch c := p.peek(); c {
	case '(', '[':
		if p.depth++; p.depth > 32 {
			return nil, ErrInvalid
		}
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		want := byte(')')
		if c == '[' {
			want = ']'
		}
		if p.peek() != want {
			return nil, ErrInvalid
		}
		p.i++
		p.depth--
		return e, nil
	}
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune("&|,()[]* !", rune(p.s[p.i])) {
		p.i++
	}
	if p.i == start {
		return nil, ErrInvalid // empty name, a count, or a stray operator
	}
	return &Expr{name: p.s[start:p.i]}, nil
}

// Match reports whether a node with the given features satisfies e.
func (e *Expr) Match(have []string) bool {
	if e == nil {
		return true
	}
	switch e.op {
	case '&':
		for _, k := range e.kids {
			if !k.Match(have) {
				return false
			}
		}
		return true
	case '|':
		for _, k := range e.kids {
			if k.Match(have) {
				return true
			}
		}
		return false
	}
	return slices.Contains(have, e.name)
}

// Names lists the feature names e mentions, for "is any of these known
// anywhere" checks.
func (e *Expr) Names() []string {
	if e == nil {
		return nil
	}
	if e.op == 0 {
		return []string{e.name}
	}
	var out []string
	for _, k := range e.kids {
		out = append(out, k.Names()...)
	}
	return out
}
