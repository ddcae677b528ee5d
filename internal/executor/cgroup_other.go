//go:build unix && !linux

package executor

import (
	"errors"
	"syscall"
)

// inCgroup: cgroups exist on Linux only; a spec that names some cannot run.
func inCgroup(spec *Spec, _ *syscall.SysProcAttr, fork func() error) error {
	if len(spec.CgroupV1Dirs) > 0 || spec.CgroupV2Dir != "" {
		return errors.New("cannot join the step's cgroups: cgroups need Linux")
	}
	return fork()
}
