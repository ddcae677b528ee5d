package acctmgr

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCommand feeds arbitrary sacctmgr command words to the parsers and
// Apply: they may refuse, never panic, and never change the
// configuration they were given.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{
		"add account test Cluster=spice Description=test Organization=LRI",
		"add user diviyan Account=test",
		"create qos default MaxTresPerUser=gres/gpu=4",
		"modify user where name=diviyan set qos=default defaultqos=default",
		"modify account test set GrpTRES=cpu=8 MaxJobs=4 Fairshare=parent",
		"modify qos default set qos+=x flags=DenyOnLimit,NoDecay MaxWall=1-00:00:00",
		"delete account where name=test",
		"list assoc tree format=account%-20,user,maxjobs withassoc where user=root",
		"show qos format=name,maxtrespu%30",
	} {
		f.Add(s)
	}
	base := adminGuide(&testing.T{})
	before, _ := json.Marshal(base)
	f.Fuzz(func(t *testing.T, line string) {
		words := strings.Fields(line)
		if len(words) < 2 {
			return
		}
		verb := words[0]
		switch {
		case IsKeyword(verb, "list") || IsKeyword(verb, "show"):
			if entity, err := MatchEntity(VerbList, words[1]); err == nil {
				if l, err := ParseList(entity, words[2:], ListOptions{}); err == nil {
					_ = l.Render(base, &Controller{"spice", "127.0.0.1", 6817, 9728})
				}
			}
			return
		case IsKeyword(verb, "add") || IsKeyword(verb, "create"):
			verb = VerbAdd
		case IsKeyword(verb, "modify"):
			verb = VerbModify
		case IsKeyword(verb, "delete"):
			verb = VerbDelete
		default:
			return
		}
		entity, err := MatchEntity(verb, words[1])
		if err != nil {
			return
		}
		_, _, _ = Apply(base, request(verb, entity, words[2:]), "spice")
		if after, _ := json.Marshal(base); string(after) != string(before) {
			t.Fatalf("Apply changed its input on %q", line)
		}
	})
}
