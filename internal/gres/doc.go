// Package gres owns a node's GPUs: finding them (gres.conf File= lines,
// or NVIDIA's management library with AutoDetect=nvml) and the
// environment a job's GPUs imply (CUDA_VISIBLE_DEVICES and friends), plus
// which device files a job must be refused. It does not schedule: the
// controller picks GPU indices; this package turns indices into devices
// and variables on the node.
package gres
