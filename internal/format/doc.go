// Package format is the output engine Slurm-style commands share: it parses
// the two format languages users pass (-o/--format "%.18i %P" and
// -O/--Format "JobID:10,Name:") into a Format, resolves a Format against a
// command's Table of fields, and renders header and rows with Slurm's
// padding and truncation rules.
//
// Rendering rules (the same for both languages):
//
//   - no width: the value is printed as is;
//   - a width: the value is padded with spaces to that many bytes, on the
//     right by default or on the left when the field is right-justified
//     ("." in both languages), and cut to that many bytes unless the field
//     is marked NoTruncate (node lists, squeue's %R);
//   - "#" instead of a width (a Drover extension used by sinfo's default
//     formats): the width is that of the widest value, at least MinAuto;
//   - literal text between fields (-o) or after a field's width (-O, the
//     "suffix") is copied; the header row uses the same widths.
//
// The package owns no command knowledge: each command (squeue, sinfo, and
// later sacct, scontrol) declares its own Table. It does no I/O beyond the
// io.Writer it is given and imports only the standard library.
package format
