package acctmgr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Entities as Request.Entity and List name them.
const (
	EntityAccount = "account"
	EntityAssoc   = "association"
	EntityCluster = "cluster"
	EntityQOS     = "qos"
	EntityUser    = "user"
)

// Verbs as Request.Verb names them.
const (
	VerbAdd    = "add"
	VerbModify = "modify"
	VerbDelete = "delete"
	VerbList   = "list"
)

// Error is a refusal worded as sacctmgr prints it: whole lines, each
// ending in a newline, meant for stderr. Its text is all that crosses
// the wire, so the newline is what tells the command the text is
// sacctmgr's own (other errors it words itself).
type Error struct{ Text string }

func (e *Error) Error() string { return e.Text }

// Warning is what Apply returns with a change it made in part: sacctmgr
// prints it on stderr and exits 1, and the change stands.
type Warning struct{ Text string }

func (w *Warning) Error() string { return w.Text }

func errorf(format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...)}
}

// slurmError is a line as Slurm's log functions print it.
func slurmError(format string, args ...any) string {
	return "sacctmgr: error: " + fmt.Sprintf(format, args...) + "\n"
}

// The lines sacctmgr prints on stdout when a change would change
// nothing; the command then exits with an error status.
const (
	msgNothingAdded    = " Nothing new added.\n"
	msgNothingModified = " Nothing modified\n"
	msgNothingDeleted  = " Nothing deleted\n"
	msgClusterExists   = "already exists.  Not adding.\n"
)

// Unchanged reports whether text, a description Apply returned, says
// the request changes nothing (and so is neither confirmed nor
// committed, and makes sacctmgr exit with an error status).
func Unchanged(text string) bool {
	for _, s := range []string{msgNothingAdded, msgNothingModified, msgNothingDeleted, msgClusterExists} {
		if strings.HasSuffix(text, s) {
			return true
		}
	}
	return false
}

func unknownOption(tok string) string {
	return " Unknown option: " + tok + "\n Use keyword 'where' to modify condition\n"
}

func unknownCondition(tok string) string {
	return " Unknown condition: " + tok + "\n Use keyword 'set' to modify value\n"
}

func unsupportedOption(key string) string {
	return slurmError("Drover does not keep %s", key)
}

// abbrev reports whether word names name: a prefix of it at least min
// letters long, in any case (how sacctmgr accepts shortened words).
func abbrev(word, name string, min int) bool {
	return len(word) >= min && len(word) <= len(name) && strings.EqualFold(word, name[:len(word)])
}

// word is one accepted spelling of a keyword: name shortened to min.
type word struct {
	name string
	min  int
}

func matchAny(w string, words ...word) bool {
	for _, x := range words {
		if abbrev(w, x.name, x.min) {
			return true
		}
	}
	return false
}

// SplitOption reads one command-line word: "Key=Value", "Key+=Value",
// "Key-=Value" or a bare word (Op ""); the first operator found splits.
func SplitOption(tok string) KeyValue {
	for i := 0; i < len(tok); i++ {
		switch {
		case tok[i] == '=':
			return KeyValue{Key: tok[:i], Op: "=", Value: tok[i+1:]}
		case (tok[i] == '+' || tok[i] == '-') && i+1 < len(tok) && tok[i+1] == '=':
			return KeyValue{Key: tok[:i], Op: tok[i : i+2], Value: tok[i+2:]}
		}
	}
	return KeyValue{Key: tok}
}

// String gives the word back as written.
func (kv KeyValue) String() string { return kv.Key + kv.Op + kv.Value }

// IsKeyword reports whether tok is the bare word "where" or "set",
// which split a modify command into its conditions and its changes.
func IsKeyword(tok, keyword string) bool {
	min := 5
	if strings.EqualFold(keyword, "set") {
		min = 3
	}
	return !strings.ContainsAny(tok, "=") && abbrev(tok, keyword, min)
}

// stripQuotes reads a value as sacctmgr does: an opening quote is
// dropped and the value ends at its match; other quotes become '`'.
func stripQuotes(s string, lower bool) string {
	var q byte
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q, s = s[0], s[1:]
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == q:
			return string(b)
		case c == '"' || c == '\'':
			c = '`'
		case lower && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// nameList reads a comma separated list of names: quotes as
// stripQuotes, empty items dropped, a repeated name kept once (at its
// last place), lower-cased when lower.
func nameList(s string, lower bool) []string {
	s = stripQuotes(s, lower)
	var out []string
	depth := 0
	start := 0
	add := func(n string) {
		if n == "" {
			return
		}
		for i, o := range out {
			if strings.EqualFold(o, n) {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, n)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// parseCount reads a count as sacctmgr does (strtol: leading digits,
// trailing junk ignored); a negative one clears the limit (NoLimit).
func parseCount(s, what string) (int, error) {
	v := strings.TrimLeft(stripQuotes(s, true), " \t\n")
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	j := i
	for j < len(v) && v[j] >= '0' && v[j] <= '9' {
		j++
	}
	if j == i {
		if v == "" {
			return 0, nil
		}
		return 0, errorf("%s", slurmError("Invalid value for %s (%s)", what, v))
	}
	n, err := strconv.ParseInt(v[:j], 10, 64)
	if n < 0 {
		return model.NoLimit, nil
	}
	if err != nil || n > 1<<31-2 {
		return 0, errorf("%s", slurmError("Invalid value for %s (%s)", what, v))
	}
	return int(n), nil
}

// parseFloat reads a factor (strtod); a negative one clears it (-1).
func parseFloat(s, what string) (float64, error) {
	v := strings.TrimSpace(stripQuotes(s, true))
	end := len(v)
	for end > 0 {
		if _, err := strconv.ParseFloat(v[:end], 64); err == nil {
			break
		}
		end--
	}
	if end == 0 {
		if v == "" {
			return 0, nil
		}
		return 0, errorf("%s", slurmError("Invalid value for %s (%s)", what, v))
	}
	f, _ := strconv.ParseFloat(v[:end], 64)
	if f < 0 {
		return -1, nil
	}
	return f, nil
}

// validTimespec accepts the shapes of Slurm's time values: digits with
// at most one '-' (before any ':') and two ':'.
func validTimespec(s string) bool {
	digits, dashes, colons := 0, 0, 0
	inDigit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if !inDigit {
				digits++
				inDigit = true
			}
		case c == '-':
			inDigit = false
			dashes++
			if colons > 0 {
				return false
			}
		case c == ':':
			inDigit = false
			colons++
		default:
			return false
		}
	}
	if digits == 0 || dashes > 1 || colons > 2 {
		return false
	}
	if dashes > 0 {
		return !(colons == 1 && digits < 3 || colons == 2 && digits < 4)
	}
	return !(colons == 1 && digits < 2 || colons == 2 && digits < 3)
}

// leadingInts reads up to n integers separated by sep, as sscanf does:
// it stops at the first one missing.
func leadingInts(s string, sep byte, n int) []int64 {
	var out []int64
	for len(out) < n {
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 {
			break
		}
		v, _ := strconv.ParseInt(s[:j], 10, 64)
		out = append(out, v)
		if j >= len(s) || s[j] != sep {
			break
		}
		s = s[j+1:]
	}
	return out
}

// parseDuration reads a time limit: minutes, minutes:seconds,
// hours:minutes:seconds, days-hours[:minutes[:seconds]]; -1, INFINITE
// and UNLIMITED clear it (NoLimit). Limits are kept in whole minutes as
// Slurm does (rounded up), returned in seconds.
func parseDuration(s string) (int64, bool) {
	s = stripQuotes(s, true)
	switch {
	case s == "":
		return 0, false
	case s == "-1" || strings.EqualFold(s, "infinite") || strings.EqualFold(s, "unlimited"):
		return model.NoLimit, true
	case !validTimespec(s):
		return 0, false
	}
	var secs int64
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days := leadingInts(d, ':', 1)
		if len(days) == 0 {
			return 0, false
		}
		secs = days[0] * 86400
		for i, v := range leadingInts(rest, ':', 3) {
			secs += v * []int64{3600, 60, 1}[i]
		}
	} else {
		v := leadingInts(s, ':', 3)
		switch len(v) {
		case 3:
			secs = v[0]*3600 + v[1]*60 + v[2]
		case 2:
			secs = v[0]*60 + v[1]
		case 1:
			secs = v[0] * 60
		default:
			return 0, false
		}
	}
	if secs > 1<<31 {
		return 0, false
	}
	return (secs + 59) / 60 * 60, true
}

// durationString prints seconds as Slurm prints limits:
// [days-]hh:mm:ss, UNLIMITED for none.
func durationString(secs int64) string {
	if secs < 0 {
		return "UNLIMITED"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// tresString prints a TRES limit list; a cleared count shows as NONE
// (only in the settings of a change).
func tresString(t model.TRES) string {
	var b strings.Builder
	for i, k := range t.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		v := t[k]
		if v < 0 {
			b.WriteString(k + "=NONE")
			continue
		}
		b.WriteString(model.TRES{k: v}.String())
	}
	return b.String()
}

// parseTRES reads a TRES limit list; counts of -1 clear one name.
func parseTRES(key, value string) (model.TRES, error) {
	v := strings.TrimPrefix(stripQuotes(value, true), ",")
	fail := func(msg string) (model.TRES, error) {
		return nil, &Error{slurmError("slurmdb_format_tres_str: %s", msg) + unknownOption(key+"="+value)}
	}
	if v == "" {
		return fail("no TRES id found for " + v)
	}
	t := model.TRES{}
	for rest := v; rest != ""; {
		item, next, _ := strings.Cut(rest, ",")
		name, _, ok := strings.Cut(item, "=")
		if !ok {
			return fail("no TRES id found for " + rest)
		}
		one, err := model.ParseTRES(item)
		switch {
		case err != nil && strings.Contains(err.Error(), "name"):
			return fail("no TRES known by type " + name)
		case err != nil:
			return nil, &Error{slurmError("Invalid value for %s (%s)", key, value) + unknownOption(key+"="+value)}
		}
		for k, n := range one {
			t[k] = n
		}
		rest = next
	}
	return t, nil
}

type entityWord struct {
	word
	entity string
}

// entity words each verb accepts, in the order sacctmgr tries them.
var entityWords = map[string][]entityWord{
	VerbAdd: {{word{"Account", 1}, EntityAccount}, {word{"Acct", 4}, EntityAccount},
		{word{"Cluster", 2}, EntityCluster}, {word{"Coordinator", 2}, "coordinator"},
		{word{"Federation", 1}, "federation"}, {word{"QOS", 1}, EntityQOS},
		{word{"Resource", 1}, "resource"}, {word{"User", 1}, EntityUser}},
	VerbList: {{word{"Accounts", 2}, EntityAccount}, {word{"Acct", 4}, EntityAccount},
		{word{"Associations", 2}, EntityAssoc}, {word{"Clusters", 2}, EntityCluster},
		{word{"Configuration", 2}, "configuration"}, {word{"Events", 1}, "event"},
		{word{"Federation", 1}, "federation"}, {word{"Problems", 1}, "problem"},
		{word{"RunawayJobs", 2}, "runawayjobs"}, {word{"OrphanJobs", 1}, "runawayjobs"},
		{word{"LostJobs", 1}, "runawayjobs"}, {word{"QOS", 1}, EntityQOS},
		{word{"Resource", 4}, "resource"}, {word{"Reservations", 4}, "reservation"},
		{word{"Resv", 4}, "reservation"}, {word{"Stats", 1}, "stats"},
		{word{"Transactions", 1}, "transaction"}, {word{"Txn", 1}, "transaction"},
		{word{"Users", 1}, EntityUser}, {word{"WCKeys", 1}, "wckey"}, {word{"tres", 2}, "tres"}},
	VerbModify: {{word{"Accounts", 1}, EntityAccount}, {word{"Acct", 4}, EntityAccount},
		{word{"Clusters", 5}, EntityCluster}, {word{"Federation", 1}, "federation"},
		{word{"Job", 1}, "job"}, {word{"QOSs", 1}, EntityQOS},
		{word{"Resource", 1}, "resource"}, {word{"Users", 1}, EntityUser}},
	VerbDelete: {{word{"Accounts", 1}, EntityAccount}, {word{"Acct", 4}, EntityAccount},
		{word{"Clusters", 2}, EntityCluster}, {word{"Coordinators", 2}, "coordinator"},
		{word{"Federations", 1}, "federation"}, {word{"QOS", 2}, EntityQOS},
		{word{"Resource", 1}, "resource"}, {word{"Users", 1}, EntityUser}},
}

var noEntity = map[string]string{
	VerbAdd: "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", " +
		"\"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n",
	VerbList: "No valid entity in list command\nInput line must include \"Account\", \"Association\", " +
		"\"Cluster\", \"Configuration\",\n\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", " +
		"\"Reservation\",\n\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n",
	VerbModify: "No valid entity in modify command\nInput line must include \"Account\", \"Cluster\", " +
		"\"Federation\", \"Job\", \"QOS\", \"Resource\" or \"User\"\n",
	VerbDelete: "No valid entity in delete command\nInput line must include \"Account\", \"Cluster\", " +
		"\"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n",
}

// MatchEntity names the entity a command word stands for after verb
// (add, modify, delete, list), or returns sacctmgr's complaint: no such
// entity, or one Drover does not keep.
func MatchEntity(verb, w string) (string, error) {
	for _, e := range entityWords[verb] {
		if abbrev(w, e.name, e.min) {
			switch e.entity {
			case EntityAccount, EntityCluster, EntityQOS, EntityUser:
				return e.entity, nil
			case EntityAssoc, "tres":
				if verb == VerbList {
					return e.entity, nil
				}
			}
			return "", errorf("%s", slurmError("Drover does not support '%s %s'", verb, e.entity))
		}
	}
	if msg, ok := noEntity[verb]; ok {
		return "", &Error{msg}
	}
	return "", errorf("invalid keyword: %s\n", verb)
}
