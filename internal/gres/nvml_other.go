//go:build !(linux && cgo)

package gres

// RealNVML, in a binary built without cgo, cannot load NVIDIA's library:
// AutoDetect=nvml falls back to gres.conf File= lines.
func RealNVML() NVML { return noNVML{} }

type noNVML struct{}

func (noNVML) Init() error                    { return ErrNoNVML }
func (noNVML) Shutdown() error                { return nil }
func (noNVML) DeviceCount() (int, error)      { return 0, ErrNoNVML }
func (noNVML) Device(int) (NVMLDevice, error) { return NVMLDevice{}, ErrNoNVML }
