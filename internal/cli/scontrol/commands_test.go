package scontrol

import (
	"errors"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

func TestHoldRelease(t *testing.T) {
	tests := []struct {
		args    []string
		errs    map[string]string
		code    int
		stderr  string
		actions []controlCall
	}{
		{[]string{"hold", "41939"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 41939, Raw: "41939"}}}, "hold"}}},
		{[]string{"release", "41934"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 41934, Raw: "41934"}}}, "release"}}},
		{[]string{"uhold", "JobId=5,6_[1-2]"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 5, Raw: "5"}, {ID: 6, Tasks: []int{1, 2}, Raw: "6_[1-2]"}}}, "uhold"}}},
		{[]string{"hold", "Name=sim"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Name: "sim"}, "hold"}}},
		{[]string{"requeue", "Incomplete", "7", "8"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 7, Raw: "7"}}}, "requeue"},
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 8, Raw: "8"}}}, "requeue"}}},
		{[]string{"requeuehold", "State=SpecialExit", "9"}, nil, 0, "", []controlCall{
			{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 9, Raw: "9"}}}, "requeuehold"}}},
		// Slurm 22.05 prints exactly this for "scontrol hold 999999".
		{[]string{"hold", "999999"}, map[string]string{"999999": cli.MsgInvalidJobID}, 1,
			"Invalid job id specified for job 999999\nslurm_suspend error: Invalid job id specified\n",
			[]controlCall{{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 999999, Raw: "999999"}}}, "hold"}}},
		{[]string{"release", "abc"}, nil, 1,
			"Invalid job id specified for job abc\nslurm_suspend error: Invalid job id specified\n", nil},
		{[]string{"requeue", "5"}, map[string]string{"5": cli.MsgNotPending}, 1,
			"Job is no longer pending execution for job 5\n", []controlCall{
				{cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 5, Raw: "5"}}}, "requeue"}}},
		{[]string{"hold"}, nil, 1, "too few arguments for keyword:hold\n", nil},
	}
	for _, tt := range tests {
		fc := &fakeClient{jobErrs: tt.errs}
		res := run(t, fc, nil, tt.args...)
		if res.code != tt.code || res.stderr != tt.stderr {
			t.Errorf("%q: code %d stderr %q", tt.args, res.code, res.stderr)
		}
		if !reflect.DeepEqual(fc.controls, tt.actions) {
			t.Errorf("%q: controls %+v\nwant %+v", tt.args, fc.controls, tt.actions)
		}
	}
	res := run(t, nil, nil, "release", "5")
	if res.code != 1 || res.stderr != cli.ErrNoController.Error()+" for job 5\nslurm_suspend error: "+cli.ErrNoController.Error()+"\n" {
		t.Errorf("no controller: %+v", res)
	}
}

func TestUpdateJob(t *testing.T) {
	target := func(id model.JobID) []cli.JobTarget {
		return []cli.JobTarget{{ID: id, Raw: itoa(id)}}
	}
	tests := []struct {
		args   []string
		code   int
		stderr string
		want   []updateCall
	}{
		{[]string{"update", "jobid=41939", "TimeLimit=5"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(41939)}, map[string]string{"TimeLimit": "00:05:00"}}}},
		{[]string{"update", "JobId=7", "Partition=gpu", "Name=x", "Comment=a b", "Nice=-10", "TimeLimit=1-00:00:00"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{
				"Partition": "gpu", "Name": "x", "Comment": "a b", "Nice": "-10", "TimeLimit": "1-00:00:00"}}}},
		{[]string{"update", "JobId", "7", "Nice"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{"Nice": "100"}}}},
		{[]string{"update", "JobId=7", "TimeLimit=UNLIMITED"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{"TimeLimit": "UNLIMITED"}}}},
		{[]string{"update", "JobId=7", "TimeLimit+=30"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{"TimeLimit": "01:30:00"}}}},
		{[]string{"update", "JobId=7", "TimeLimit=-0:30:00"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{"TimeLimit": "00:30:00"}}}},
		{[]string{"update", "JobName=sim", "Comment=c"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Name: "sim"}, map[string]string{"Name": "sim", "Comment": "c"}}}},
		{[]string{"update", "JobId=7", "TimeLimit-=2:00:00"}, 1,
			"scontrol: error: TimeLimit decrement larger than current time limit (120 > 60)\n", nil},
		{[]string{"update", "JobId=7", "TimeLimit=soon"}, 1, "scontrol: error: Invalid TimeLimit value\n", nil},
		{[]string{"update", "JobId=7", "Nice=9999999999"}, 1,
			"scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\n", nil},
		{[]string{"update", "JobId=7", "Features=x&y", "MinCPUsNode=4"}, 0, "", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(7)}, map[string]string{"Features": "x&y", "MinCPUsNode": "4"}}}},
		{[]string{"update", "JobId=7", "MinCPUsNode=many"}, 1, "scontrol: error: Invalid MinCPUsNode value: many\n", nil},
		{[]string{"update", "JobId=7", "Licenses=x"}, 1,
			"Update of this parameter is not supported: Licenses=x\nRequest aborted\n", nil},
		{[]string{"update", "JobId=7"}, 1, "No changes specified\n", nil},
		{[]string{"update", "JobId=x1", "Comment=c"}, 1, "Invalid job id specified for job x1\n", nil},
		{[]string{"update", "JobId=999", "Comment=c"}, 1, "Invalid job id specified for job 999\n", []updateCall{
			{cli.JobSelection{UID: -1, Targets: target(999)}, map[string]string{"Comment": "c"}}}},
		{[]string{"update", "Comment=c"}, 1,
			"No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n", nil},
		{[]string{"update", "PartitionName=p", "State=DOWN"}, 1,
			"scontrol: error: update: only jobs, nodes and reservations can be updated in Drover\n", nil},
	}
	for _, tt := range tests {
		fc := &fakeClient{jobErrs: map[string]string{"999": cli.MsgInvalidJobID}, jobs: []*model.Job{
			{ID: 7, ArrayTaskID: model.NoArrayTask, TimeLimit: 3600}}}
		res := run(t, fc, nil, tt.args...)
		if res.code != tt.code || res.stderr != tt.stderr {
			t.Errorf("%q: code %d stderr %q", tt.args, res.code, res.stderr)
		}
		if !reflect.DeepEqual(fc.updates, tt.want) {
			t.Errorf("%q: updates %+v\nwant %+v", tt.args, fc.updates, tt.want)
		}
	}
}

func itoa(id model.JobID) string {
	return (&model.Job{ID: id, ArrayTaskID: model.NoArrayTask}).DisplayID()
}

func TestUpdateNode(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
		want   []nodeUpdate
	}{
		{[]string{"update", "NodeName=n[1-2]", "State=DRAIN", "Reason=\"bad disk\""}, 0, "", []nodeUpdate{
			{[]string{"n1", "n2"}, map[string]string{"State": "DRAIN", "Reason": "bad disk"}}}},
		{[]string{"update", "nodename=n1", "state=res"}, 0, "", []nodeUpdate{
			{[]string{"n1"}, map[string]string{"State": "RESUME"}}}},
		{[]string{"update", "NodeName=n1", "State=undrain"}, 0, "", []nodeUpdate{
			{[]string{"n1"}, map[string]string{"State": "UNDRAIN"}}}},
		{[]string{"update", "NodeName=n1", "State=idle"}, 0, "", []nodeUpdate{
			{[]string{"n1"}, map[string]string{"State": "IDLE"}}}},
		{[]string{"update", "NodeName=n1", "State=DOWN"}, 1,
			"You must specify a reason when DOWNING or DRAINING a node. Request denied\n", nil},
		{[]string{"update", "NodeName=n1", "State=FLY"}, 1,
			"Invalid input: State=FLY\nRequest aborted\nValid states are: DRAIN DOWN IDLE RESUME UNDRAIN\nNot all states are valid given a node's prior state\n", nil},
		{[]string{"update", "NodeName=n1", "Weight=5"}, 1,
			"Update of this parameter is not supported: Weight=5\nRequest aborted\n", nil},
		{[]string{"update", "NodeName=n1"}, 1, "No changes specified\n", nil},
	}
	for _, tt := range tests {
		fc := &fakeClient{}
		res := run(t, fc, nil, tt.args...)
		if res.code != tt.code || res.stderr != tt.stderr {
			t.Errorf("%q: code %d stderr %q", tt.args, res.code, res.stderr)
		}
		if !reflect.DeepEqual(fc.nodeUpd, tt.want) {
			t.Errorf("%q: updates %+v\nwant %+v", tt.args, fc.nodeUpd, tt.want)
		}
	}
	fc := &fakeClient{nodesErr: errors.New(cli.MsgInvalidNode)}
	res := run(t, fc, nil, "update", "NodeName=zz", "State=RESUME")
	if res.code != 1 || res.stderr != "slurm_update error: Invalid node name specified\n" {
		t.Errorf("server error: %+v", res)
	}
}

func TestPing(t *testing.T) {
	ctl := func(host string, up bool) cli.ControllerStatus { return cli.ControllerStatus{Host: host, Up: up} }
	tests := []struct {
		ctls []cli.ControllerStatus
		uid  int
		code int
		out  string
	}{
		{[]cli.ControllerStatus{ctl("vm", true)}, 1000, 0, "Slurmctld(primary) at vm is UP\n"},
		{[]cli.ControllerStatus{ctl("a", true), ctl("b", false)}, 1000, 0,
			"Slurmctld(primary) at a is UP\nSlurmctld(backup) at b is DOWN\n"},
		{[]cli.ControllerStatus{ctl("a", false), ctl("b", true), ctl("c", true)}, 1000, 0,
			"Slurmctld(primary) at a is DOWN\nSlurmctld(backup1) at b is UP\nSlurmctld(backup2) at c is UP\n"},
		{[]cli.ControllerStatus{ctl("a", false)}, 0, 1, "Slurmctld(primary) at a is DOWN\n" + restoreBanner},
	}
	for _, tt := range tests {
		res := runOn(t, testHost(tt.uid), &fakeClient{ping: &cli.PingResult{Controllers: tt.ctls}}, nil, "", "ping")
		if res.code != tt.code || res.stdout != tt.out {
			t.Errorf("%+v: %+v", tt.ctls, res)
		}
	}
	if res := run(t, nil, nil, "ping"); res.code != 1 || res.stderr != "slurm_ping error: "+cli.ErrNoController.Error()+"\n" {
		t.Errorf("no controller: %+v", res)
	}
}

func TestKeywordsAndModes(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		out    string
		stderr string
	}{
		{[]string{"frobnicate"}, 1, "", "invalid keyword: frobnicate\n"},
		{[]string{"show"}, 1, "", "too few arguments for keyword:show\n"},
		{[]string{"show", "job", "1", "2"}, 1, "", "too many arguments for keyword:show\n"},
		{[]string{"show", "bogus"}, 1, "", "invalid entity:bogus for keyword:show \n"},
		{[]string{"show", "topology"}, 1, "", "scontrol: error: show topology: not supported by Drover\n"},
		{[]string{"top"}, 1, "", "too few arguments for keyword:top\n"},
		{[]string{"top", "5", "6"}, 1, "", "too many arguments for keyword:top\n"},
		{[]string{"top", "5.1"}, 1, "", "Invalid job id specified for job 5.1\n"},
		{[]string{"vers"}, 0, "slurm 22.05.8\n", ""},
		{[]string{"-V"}, 0, "slurm 22.05.8\n", ""},
		{[]string{"--bogus"}, 1, "", "scontrol: unknown flag: --bogus\nTry \"scontrol --help\" for more information\n"},
		{[]string{"--json", "show", "job"}, 1, "", "scontrol: error: --json is not supported by this scontrol\n"},
		{[]string{"sh", "config"}, 1, "", "invalid keyword: sh\n"},
	}
	for _, tt := range tests {
		res := run(t, &fakeClient{}, nil, tt.args...)
		if res.code != tt.code || res.stdout != tt.out || res.stderr != tt.stderr {
			t.Errorf("%q: %+v", tt.args, res)
		}
	}
	fc := &fakeClient{}
	if res := run(t, fc, nil, "reconfig"); res.code != 0 || fc.reconfig != 1 {
		t.Errorf("reconfigure: %+v %d", res, fc.reconfig)
	}
	fc = &fakeClient{err: errors.New("Access/permission denied")}
	if res := run(t, fc, []string{"SLURM_EXIT_ERROR=7"}, "reconfigure"); res.code != 7 ||
		res.stderr != "slurm_reconfigure error: Access/permission denied\n" {
		t.Errorf("reconfigure error: %+v", res)
	}
}

func TestStdinCommands(t *testing.T) {
	fc := referenceCluster()
	fc.ping = &cli.PingResult{Controllers: []cli.ControllerStatus{{Host: "vm", Up: true}}}
	in := "show hostnames 'n[1-2]'\n\noneliner\nshow partition debug\nquit\nping\n"
	res := runIn(t, fc, nil, in)
	wantPrefix := "n1\nn2\nPartitionName=debug AllowGroups=ALL "
	if res.code != 0 || len(res.stdout) < len(wantPrefix) || res.stdout[:len(wantPrefix)] != wantPrefix ||
		res.stdout[len(res.stdout)-1] != '\n' || res.stdout[len(res.stdout)-2] == '\n' {
		t.Errorf("stdin mode: %+v", res)
	}
	if words := splitLine(`update NodeName=n1 Reason="two words" x'y z'`); !reflect.DeepEqual(words,
		[]string{"update", "NodeName=n1", "Reason=two words", "xy z"}) {
		t.Errorf("splitLine = %q", words)
	}
}

func TestAbbrev(t *testing.T) {
	for _, tt := range []struct {
		tag, kw string
		min     int
		want    bool
	}{
		{"sho", "show", 3, true}, {"SHOW", "show", 3, true}, {"sh", "show", 3, false},
		{"showx", "show", 3, false}, {"requeueh", "requeuehold", 11, false}, {"u", "update", 1, true},
	} {
		if got := abbrev(tt.tag, tt.kw, tt.min); got != tt.want {
			t.Errorf("abbrev(%q, %q, %d) = %v", tt.tag, tt.kw, tt.min, got)
		}
	}
}

// scontrol top sends the ordered list to the controller as one request.
func TestTop(t *testing.T) {
	fc := &fakeClient{}
	if res := run(t, fc, nil, "top", "JobId=7,5"); res.code != 0 || len(fc.controls) != 1 {
		t.Fatalf("top: %+v %+v", res, fc.controls)
	}
	c := fc.controls[0]
	if c.action != "top" || len(c.sel.Targets) != 2 || c.sel.Targets[0].ID != 7 || c.sel.Targets[1].ID != 5 {
		t.Errorf("call %+v", c)
	}
	fc = &fakeClient{jobErrs: map[string]string{"5": "Access/permission denied"}}
	if res := run(t, fc, nil, "top", "5"); res.code != 1 || res.stderr != "Access/permission denied for job 5\n" {
		t.Errorf("refused: %+v", res)
	}
}
