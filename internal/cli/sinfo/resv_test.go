package sinfo

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

func TestReservationsReportAndStates(t *testing.T) {
	c := mixedClient()
	now := refNow.Unix()
	c.now = now
	c.resvs = []*model.Reservation{
		{Name: "maint", Start: now - 60, End: now + 3600, Flags: model.ResvMaint, Nodes: []string{"n1", "n4"}},
		{Name: "lab_reservation", Start: now + 3600, End: now + 7200, Nodes: []string{"n2"}},
		{Name: "now", Start: now - 60, End: now + 60, Nodes: []string{"n2"}},
	}
	out, _, code := runSinfo(t, c, nil, "-T")
	start := func(off int64) string {
		return refNow.Add(time.Duration(off) * time.Second).Format("2006-01-02T15:04:05")
	}
	want := "RESV_NAME           STATE           START_TIME             END_TIME     DURATION  NODELIST\n" +
		"maint              ACTIVE  " + start(-60) + "  " + start(3600) + "     01:01:00  n[1,4]\n" +
		"lab_reservation  INACTIVE  " + start(3600) + "  " + start(7200) + "     01:00:00  n2\n" +
		"now                ACTIVE  " + start(-60) + "  " + start(60) + "     00:02:00  n2\n"
	if code != 0 || out != want {
		t.Errorf("sinfo -T:\n%s\nwant:\n%s", out, want)
	}
	out, _, _ = runSinfo(t, c, nil, "-h", "-p", "batch", "-o", "%t %N")
	for _, line := range []string{"maint n1\n", "resv n2\n", "alloc$ n4\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("sinfo states: missing %q in\n%s", line, out)
		}
	}
	out, _, _ = runSinfo(t, c, nil, "-h", "-t", "maint", "-o", "%N")
	if out != "n[1,4]\n" {
		t.Errorf("-t maint: %q", out)
	}
}
