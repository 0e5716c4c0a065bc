package upgrade

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	openshiftCgroupID    = "openshift-cgroup-v1"
	ruleOpenShiftCgroup  = "cgroup-mode-v1"
	caseOpenShiftCgroup  = "openshift-okd-cgroup-v1-clusters-upgrade-failures-and-gate-2023-2025"
	openshiftCgroupModeV = "v1"
)

// openshiftCgroupV1Check finds OpenShift and OKD clusters whose node
// configuration keeps every node on cgroup v1.
func openshiftCgroupV1Check() check.Check {
	return check.Check{
		ID:       openshiftCgroupID,
		Title:    "OpenShift or OKD cluster configured to keep its nodes on cgroup v1",
		Severity: finding.High,
		Description: "Reads OpenShift's cluster-wide node configuration (config.openshift.io/v1 Node, normally named " +
			"cluster, served only on OpenShift and OKD). spec.cgroupMode v1 makes the Machine Config Operator boot every " +
			"node with cgroup v1 and put it back when a node is switched by hand. Kernels that no longer provide the cgroup " +
			"v1 file memory.kmem.limit_in_bytes stop kubelets whose runc library still reads it, and the cluster's own " +
			"update delivers the kernel: OKD nodes went NotReady that way in November 2023. The Machine Config Operator " +
			"also marks such clusters not upgradeable (machine-config ClusterOperator Upgradeable=False, reason " +
			"ClusterOnCgroupV1) ahead of OpenShift 4.19. High; other values (v2, or unset) are not reported.",
		Reads: []check.Input{check.Optional(snapshot.OpenShiftNodeConfigs)},
		Rules: []check.Rule{
			{ID: ruleOpenShiftCgroup, Summary: "the OpenShift node configuration does not keep the nodes on cgroup v1",
				Needs: []snapshot.Resource{snapshot.OpenShiftNodeConfigs}},
		},
		Cases: check.Prevents(caseOpenShiftCgroup),
		Run:   runOpenShiftCgroupV1,
	}
}

func runOpenShiftCgroupV1(ctx *check.Context) ([]finding.Finding, error) {
	var out []finding.Finding
	for _, o := range ctx.Snapshot.CustomObjects(snapshot.OpenShiftNodeConfigs) {
		mode, _, _ := unstructured.NestedString(o.Object, "spec", "cgroupMode")
		if mode != openshiftCgroupModeV {
			continue
		}
		ref := finding.ObjectRef{APIVersion: o.GetAPIVersion(), Kind: "Node", Name: o.GetName()}
		f := finding.Finding{
			Check:    openshiftCgroupID,
			Severity: finding.High,
			Title:    fmt.Sprintf("nodes.config.openshift.io %s keeps every node on cgroup v1", o.GetName()),
			Message: fmt.Sprintf("The cluster's node configuration %s sets spec.cgroupMode v1, so the Machine Config Operator boots every "+
				"node with cgroup v1 and reverts a node switched to v2 by hand. A node OS update that brings a kernel without the cgroup v1 "+
				"file memory.kmem.limit_in_bytes stops kubelets whose runc library still reads it, as OKD 4.14 nodes went NotReady in "+
				"November 2023, and the Machine Config Operator marks clusters on cgroup v1 not upgradeable (reason ClusterOnCgroupV1) "+
				"ahead of OpenShift 4.19.", o.GetName()),
			Objects: []finding.ObjectRef{ref},
			Remediation: "Set spec.cgroupMode to v2 (oc patch nodes.config cluster --type merge -p '{\"spec\":{\"cgroupMode\":\"v2\"}}') " +
				"after checking that workloads read cgroup v2 (JVMs, agents, anything reading /sys/fs/cgroup/memory); the Machine Config " +
				"Operator then reboots the pools onto cgroup v2, and the cluster cannot be set back to v1.",
			Cases: []string{caseOpenShiftCgroup},
			Evidence: []string{
				"gate: https://github.com/openshift/machine-config-operator/pull/4822 https://github.com/openshift/enhancements/pull/1751",
				"kernel: https://github.com/kubernetes/kubernetes/issues/120813 https://github.com/okd-project/okd/issues/1798",
			},
		}
		f.AddEvidence(finding.Quote(ref, finding.Value("spec.cgroupMode", mode)))
		out = append(out, f)
	}
	return out, nil
}
