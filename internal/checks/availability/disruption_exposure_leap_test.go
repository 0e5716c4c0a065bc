package availability

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// The LEAP hub as Zero to JupyterHub 3.2.0 deploys it (one replica, its
// budget off by default): the single replica without a budget is
// reported, citing the case; with the chart's budget switched on it is not.
func TestDisruptionLEAPHub(t *testing.T) {
	const gap = "disruption-exposure/leap-hub.yaml"
	fs, ctx := run(t, disruptionExposureCheck(), gap, true)
	expect(t, fs, []want{
		{"Deployment", "prod", "hub", "1 replica and no PodDisruptionBudget", finding.Low, caseLEAPHub},
	})
	if !slices.Contains(fs[0].Cases, caseDFDSRollover) {
		t.Errorf("cases %v: the single-replica cases are cited together", fs[0].Cases)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
	checktest.EvidenceTrue(t, fs, gap)

	budgeted := checktest.Complete(checktest.Load(t, gap, "disruption-exposure/leap-hub-pdb.yaml"))
	checktest.Quiet(t, disruptionExposureCheck(), budgeted)
}
