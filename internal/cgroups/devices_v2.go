package cgroups

import (
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Device types and the context fields of a cgroup device program
// (struct bpf_cgroup_dev_ctx: access_type, major, minor; the low 16 bits
// of access_type are the type).
const (
	bpfDevBlock = 1
	bpfDevChar  = 2
)

// deviceProgram returns a program that refuses the listed devices and
// allows every other: for each rule, a run of tests that jumps to the
// next rule on the first mismatch, and returns 0 (refuse) when all match.
func deviceProgram(deny []Device) asm.Instructions {
	insts := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.And.Imm(asm.R2, 0xffff),
		asm.LoadMem(asm.R4, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R5, asm.R1, 8, asm.Word),
	}
	for i, d := range deny {
		next := fmt.Sprintf("rule%d", i+1)
		typ := int32(bpfDevChar)
		if d.Type == 'b' {
			typ = bpfDevBlock
		}
		insts = append(insts, asm.JNE.Imm(asm.R2, typ, next))
		if d.Major >= 0 {
			insts = append(insts, asm.JNE.Imm(asm.R4, int32(d.Major), next))
		}
		if d.Minor >= 0 {
			insts = append(insts, asm.JNE.Imm(asm.R5, int32(d.Minor), next))
		}
		insts = append(insts, asm.Mov.Imm(asm.R0, 0), asm.Return())
		insts = append(insts, asm.Mov.Imm(asm.R0, 0).WithSymbol(next)) // a no-op landing
	}
	return append(insts, asm.Mov.Imm(asm.R0, 1), asm.Return())
}

// denyDevicesV2 attaches a device program to the group at dir: every
// device is allowed but the listed ones. The attachment keeps the program
// alive for the life of the group (programs attached with ALLOW_MULTI
// stack with any an ancestor has: a device must pass all).
func denyDevicesV2(dir string, deny []Device) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.CGroupDevice, Instructions: deviceProgram(deny), License: "Apache-2.0",
	})
	if err != nil {
		return fmt.Errorf("cgroups: load device program: %w", err)
	}
	defer prog.Close()
	fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	err = link.RawAttachProgram(link.RawAttachProgramOptions{
		Target: fd, Program: prog, Attach: ebpf.AttachCGroupDevice, Flags: unix.BPF_F_ALLOW_MULTI,
	})
	if err != nil {
		return fmt.Errorf("cgroups: attach device program: %w", err)
	}
	return nil
}
