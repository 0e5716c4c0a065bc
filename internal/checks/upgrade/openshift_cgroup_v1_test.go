package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestOpenShiftCgroupV1Gap(t *testing.T) {
	const file = "openshift-cgroup-v1/gap.yaml"
	fs, ctx, ok := checktest.Run(t, openshiftCgroupV1Check(), checktest.Complete(checktest.Load(t, file)))
	if !ok || len(fs) != 1 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	if f := fs[0]; f.Severity != finding.High || f.Cases[0] != caseOpenShiftCgroup || !checktest.HasObject(fs, "Node", "", "cluster") ||
		!strings.Contains(f.Message, "ClusterOnCgroupV1") || f.Objects[0].APIVersion != "config.openshift.io/v1" {
		t.Errorf("finding %+v", f)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 1 {
		t.Errorf("%d evidence items resolved", n)
	}
}

// cgroupMode v2, or unset, is quiet.
func TestOpenShiftCgroupV1Clean(t *testing.T) {
	checktest.Quiet(t, openshiftCgroupV1Check(), checktest.Complete(checktest.Load(t, "openshift-cgroup-v1/clean.yaml")))
	s := checktest.Complete(checktest.Load(t, "openshift-cgroup-v1/gap.yaml"))
	objs := s.CustomObjects(snapshot.OpenShiftNodeConfigs)
	delete(objs[0].Object["spec"].(map[string]any), "cgroupMode")
	checktest.Quiet(t, openshiftCgroupV1Check(), s)
}
