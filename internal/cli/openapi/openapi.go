// Package openapi is what the commands' --json output shares (Slurm
// 22.05's OpenAPI framing). It is apart from package cli, which every
// command links, so that sbatch's binary links no encoding/json.
package openapi

import (
	"encoding/json"
	"io"
)

// Meta is the "meta" object Slurm 22.05's --json outputs open with
// (data_parser v0.0.38).
type Meta struct {
	Plugin struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"plugin"`
	Slurm struct {
		Version struct {
			Major int `json:"major"`
			Micro int `json:"micro"`
			Minor int `json:"minor"`
		} `json:"version"`
		Release string `json:"release"`
	} `json:"Slurm"`
}

// NewMeta describes the interface Drover's --json speaks.
func NewMeta() Meta {
	var m Meta
	m.Plugin.Type, m.Plugin.Name = "openapi/v0.0.38", "Slurm OpenAPI v0.0.38"
	m.Slurm.Version.Major, m.Slurm.Version.Minor, m.Slurm.Version.Micro = 22, 5, 8
	m.Slurm.Release = "22.05.8"
	return m
}

// Write writes v indented by two spaces, as Slurm's --json does.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
