package resources

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestNodeReservationGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, nodeReservationCheck(), checktest.Complete(checktest.Load(t, "reservation-gap.yaml")))
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]finding.Severity{"thin-1": finding.Medium, "bare-1": finding.High}
	for _, f := range fs {
		if !slices.Contains(f.Cases, dfdsReservedCase) {
			t.Errorf("%s: cases %v", f.Title, f.Cases)
		}
		for _, o := range f.Objects {
			sev, listed := want[o.Name]
			if !listed {
				t.Errorf("node %s flagged: %s", o.Name, f.Title)
			} else if sev != f.Severity {
				t.Errorf("node %s: %v, want %v", o.Name, f.Severity, sev)
			}
			delete(want, o.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("not flagged: %v (findings %+v)", want, fs)
	}
}

func TestNodeReservationHealthyPasses(t *testing.T) {
	checktest.Quiet(t, nodeReservationCheck(), checktest.Complete(checktest.Load(t, "reservation-ok.yaml")))
}
