package jobspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/nss"
)

// setUID and setGID take --uid/--gid as a name or a number. Only root
// may give them (sbatch's own check, with its words and exit code); the
// controller refuses them again from anyone else.
func setUID(p *parser, v string, _ bool) error {
	if !p.ctx.Root {
		return optErr("--uid only permitted by root user")
	}
	id, err := lookupID(v, func(name string) (string, error) {
		u, err := nss.Lookup(name)
		if err != nil {
			return "", err
		}
		return u.Uid, nil
	})
	if err != nil {
		return optErr(fmt.Sprintf("--uid=\"%s\" invalid", v))
	}
	p.spec.UID = &id
	return nil
}

func setGID(p *parser, v string, _ bool) error {
	if !p.ctx.Root {
		return optErr("--gid only permitted by root user")
	}
	id, err := lookupID(v, func(name string) (string, error) {
		g, err := nss.LookupGroup(name)
		if err != nil {
			return "", err
		}
		return g.Gid, nil
	})
	if err != nil {
		return optErr(fmt.Sprintf("--gid=\"%s\" invalid", v))
	}
	p.spec.GID = &id
	return nil
}

func lookupID(v string, byName func(string) (string, error)) (uint32, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return uint32(n), nil
	}
	s, err := byName(v)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}

// setPriority takes --priority=N or TOP. The controller applies it for
// operators only and drops it for anyone else, as Slurm does.
func setPriority(p *parser, v string, _ bool) error {
	var n uint64
	if strings.EqualFold(strings.TrimSpace(v), "top") {
		n = math.MaxUint32 - 1
	} else {
		var err error
		if n, err = strconv.ParseUint(strings.TrimSpace(v), 10, 32); err != nil || n >= math.MaxUint32 {
			return optErr("Invalid --priority specification")
		}
	}
	prio := uint32(n)
	p.spec.Priority = &prio
	return nil
}

// settleUmask carries the submitter's umask: SLURM_UMASK in the input
// environment wins (a batch script's srun keeps its job's), else the
// process's own. The job's tasks run with it and their output files are
// created with it.
func (p *parser) settleUmask() {
	var mask uint32
	if v, ok := p.env.lookup("SLURM_UMASK"); ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
		if err != nil || n > 0o777 {
			return
		}
		mask = uint32(n)
	} else if m, ok := p.umask(); ok {
		mask = m & 0o777
		p.spec.Env = append(p.spec.Env, fmt.Sprintf("SLURM_UMASK=%04o", mask))
	} else {
		return
	}
	p.spec.Umask = &mask
}

func (p *parser) umask() (uint32, bool) {
	if p.ctx.Umask == nil {
		return 0, false
	}
	return p.ctx.Umask()
}
