// Package gres owns GPU discovery on a node and the environment a job's
// GPUs imply. Discover finds the node's GPUs, in GRES index order: from
// the gres.conf Name=gpu File= lines, or auto-detected (AutoDetect=nvml
// through NVIDIA's management library, AutoDetect=nvidia from the
// driver's /proc files) with gres.conf naming their types. Env gives the
// variables a job or step sees for the indices it holds
// (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS, ...), and DenyList the devices it
// must be refused.
//
// It does not schedule: the controller picks GPU indices, and the agent
// applies the device rules; this package turns indices into devices and
// variables on the node. NVML is reached through the NVML interface, so
// that tests need no GPU; RealNVML loads the library only when asked, and
// only in binaries built with cgo.
package gres
