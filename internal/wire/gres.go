package wire

import (
	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
)

// GPUReqToPB converts a GPU request; nil stays nil.
func GPUReqToPB(r *model.GPUReq) *pb.GPUReq {
	if r == nil {
		return nil
	}
	return &pb.GPUReq{Type: r.Type, PerNode: int32(r.PerNode), Total: int32(r.Total), PerTask: int32(r.PerTask),
		CpusPerGpu: int32(r.CPUsPerGPU), MemPerGpu: r.MemPerGPU}
}

// GPUReqFromPB converts a wire GPU request.
func GPUReqFromPB(r *pb.GPUReq) *model.GPUReq {
	if r == nil {
		return nil
	}
	return &model.GPUReq{Type: r.Type, PerNode: int(r.PerNode), Total: int(r.Total), PerTask: int(r.PerTask),
		CPUsPerGPU: int(r.CpusPerGpu), MemPerGPU: r.MemPerGpu}
}

// GPUsToPB converts a node's GPU list.
func GPUsToPB(gs []model.GPU) []*pb.GPU {
	if len(gs) == 0 {
		return nil
	}
	out := make([]*pb.GPU, len(gs))
	for i, g := range gs {
		out[i] = &pb.GPU{Index: int32(g.Index), Type: g.Type, File: g.File, Major: g.Major, Minor: g.Minor}
	}
	return out
}

// GPUsFromPB converts a wire GPU list.
func GPUsFromPB(gs []*pb.GPU) []model.GPU {
	if len(gs) == 0 {
		return nil
	}
	out := make([]model.GPU, len(gs))
	for i, g := range gs {
		out[i] = model.GPU{Index: int(g.Index), Type: g.Type, File: g.File, Major: g.Major, Minor: g.Minor}
	}
	return out
}

// UsageToPB converts step usage; nil stays nil.
func UsageToPB(u *model.Usage) *pb.Usage {
	if u == nil {
		return nil
	}
	return &pb.Usage{MaxRss: u.MaxRSS, MaxRssNode: u.MaxRSSNode, AveRss: u.AveRSS, UserCpu: u.UserCPU,
		SystemCpu: u.SystemCPU, MaxPids: u.MaxPids, Nodes: int32(u.Nodes), Gpus: u.GPUs, Samples: u.Samples}
}

// UsageFromPB converts wire step usage.
func UsageFromPB(u *pb.Usage) *model.Usage {
	if u == nil {
		return nil
	}
	return &model.Usage{MaxRSS: u.MaxRss, MaxRSSNode: u.MaxRssNode, AveRSS: u.AveRss, UserCPU: u.UserCpu,
		SystemCPU: u.SystemCpu, MaxPids: u.MaxPids, Nodes: int(u.Nodes), GPUs: u.Gpus, Samples: u.Samples}
}

func bitmapToPB(b model.Bitmap) []uint64 {
	if len(b) == 0 {
		return nil
	}
	return []uint64(b)
}

func bitmapFromPB(b []uint64) model.Bitmap {
	if len(b) == 0 {
		return nil
	}
	return model.Bitmap(b)
}
