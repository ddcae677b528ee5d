//go:build linux && cgo

package gres

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// RealNVML is NVIDIA's library through go-nvml, which loads
// libnvidia-ml.so.1 (dlopen) when Init is called, so the binary starts on
// machines without it: there Init returns ErrNoNVML, as it does (wrapped)
// when the library is there but its kernel driver is not loaded.
func RealNVML() NVML { return realNVML{} }

type realNVML struct{}

func (realNVML) Init() error {
	switch r := nvml.Init(); r {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return ErrNoNVML
	case nvml.ERROR_DRIVER_NOT_LOADED:
		// The library without its kernel driver: no GPU to find either.
		return fmt.Errorf("%w: %s", ErrNoNVML, nvml.ErrorString(r))
	default:
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
