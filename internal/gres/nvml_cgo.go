//go:build linux && cgo

package gres

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// RealNVML is NVIDIA's library through go-nvml, which loads
// libnvidia-ml.so.1 when Init is called: a machine without the driver
// gets ErrNoNVML, not a failure to start.
func RealNVML() NVML { return realNVML{} }

type realNVML struct{}

func (realNVML) Init() error {
	if r := nvml.Init(); r != nvml.SUCCESS {
		if r == nvml.ERROR_LIBRARY_NOT_FOUND {
			return ErrNoNVML
		}
		return fmt.Errorf("nvml init: %s", nvml.ErrorString(r))
	}
	return nil
}

func (realNVML) Shutdown() error {
	if r := nvml.Shutdown(); r != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", nvml.ErrorString(r))
	}
	return nil
}

func (realNVML) DeviceCount() (int, error) {
	n, r := nvml.DeviceGetCount()
	if r != nvml.SUCCESS {
		return 0, fmt.Errorf("nvml device count: %s", nvml.ErrorString(r))
	}
	return n, nil
}

func (realNVML) Device(i int) (NVMLDevice, error) {
	d, r := nvml.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		return NVMLDevice{}, fmt.Errorf("nvml device %d: %s", i, nvml.ErrorString(r))
	}
	var out NVMLDevice
	if out.Name, r = d.GetName(); r != nvml.SUCCESS {
		return out, fmt.Errorf("nvml device %d name: %s", i, nvml.ErrorString(r))
	}
	out.UUID, _ = d.GetUUID()
	minor, r := d.GetMinorNumber()
	if r != nvml.SUCCESS {
		return out, fmt.Errorf("nvml device %d minor number: %s", i, nvml.ErrorString(r))
	}
	out.Minor = minor
	if mem, r := d.GetMemoryInfo(); r == nvml.SUCCESS {
		out.MemoryBytes = mem.Total
	}
	return out, nil
}
