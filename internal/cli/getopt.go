package cli

import "strings"

// GetoptMessage words a pflag parse error as glibc's getopt does, which
// is what Slurm's commands print ("unrecognized option '--foo'").
func GetoptMessage(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: "):
		return "unrecognized option '" + strings.TrimPrefix(msg, "unknown flag: ") + "'"
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown shorthand flag: "), " in ")
		return "invalid option -- " + name
	case strings.HasPrefix(msg, "bad flag syntax: "):
		return "unrecognized option '" + strings.TrimPrefix(msg, "bad flag syntax: ") + "'"
	case strings.HasPrefix(msg, "flag needs an argument: --"):
		return "option '" + strings.TrimPrefix(msg, "flag needs an argument: ") + "' requires an argument"
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "flag needs an argument: "), " in ")
		return "option requires an argument -- " + name
	}
	return msg
}
