package gres

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// procNvidiaGPUs is where NVIDIA's kernel driver describes its GPUs: one
// directory per PCI device, each with an "information" file. A variable so
// that tests can point it elsewhere.
var procNvidiaGPUs = "/proc/driver/nvidia/gpus"

// errNoProc: the driver's /proc files are not there (no driver loaded).
var errNoProc = errors.New("no /proc/driver/nvidia/gpus")

// fromProc lists the GPUs the NVIDIA driver describes under dir, by minor
// number, as AutoDetect=nvidia does without NVML. It reads the "Model:"
// and "Device Minor:" lines of each GPU's information file.
func fromProc(dir string) ([]model.GPU, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoProc, err)
	}
	var out []model.GPU
	for _, e := range ents {
		info := filepath.Join(dir, e.Name(), "information")
		product, minor, err := readProcInfo(info)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, nvidiaGPU(product, minor))
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Minor < out[b].Minor })
	return out, nil
}

func readProcInfo(path string) (product string, minor int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	minor = -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "Model":
			product = val
		case "Device Minor":
			if minor, err = strconv.Atoi(val); err != nil || minor < 0 {
				return "", 0, fmt.Errorf("%s: bad Device Minor %q", path, val)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	if minor < 0 {
		return "", 0, fmt.Errorf("%s: no Device Minor line", path)
	}
	return product, minor, nil
}
