package versions

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestChecksRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func sevOf(fs []finding.Finding, kind, ns, name string) (finding.Severity, bool) {
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Kind == kind && o.Namespace == ns && o.Name == name {
				return f.Severity, true
			}
		}
	}
	return 0, false
}

func TestEtcdKnownBadVersionGap(t *testing.T) {
	s := checktest.Load(t, "etcd-known-bad-version/gap.yaml")
	fs, ctx, ok := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	for name, want := range map[string]finding.Severity{"etcd-cp-1": finding.High, "etcd-cp-2": finding.Medium} {
		if got, found := sevOf(fs, "Pod", "kube-system", name); !found || got != want {
			t.Errorf("%s: %v (found %v), want %v", name, got, found, want)
		}
	}
	if _, found := sevOf(fs, "Pod", "kube-system", "etcd-cp-3"); found || len(fs) != 2 {
		t.Errorf("findings %+v: 3.5.16 is fine", fs)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v", ctx.Notes())
	}
}

func TestEtcdKnownBadVersionClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-known-bad-version/clean.yaml"))
	checktest.Quiet(t, etcdKnownBadVersionCheck(), s)
}

// External etcd is invisible: never pass, even on complete input.
func TestEtcdKnownBadVersionNoEtcdIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-known-bad-version/no-etcd.yaml"))
	_, ctx, _ := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	n, ok := ctx.Notes()[ruleEtcdMin]
	if !ok || n.Skipped {
		t.Fatalf("notes %v, want the rule partial", ctx.Notes())
	}
}

// Nodes are optional: with their read failed and no etcd pod, the rule
// says that a managed control plane could not be recognised (issue 28).
func TestEtcdKnownBadVersionNodesFailed(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-known-bad-version/no-etcd.yaml"))
	s.Drop(snapshot.Nodes)
	s.SetCoverage(snapshot.Nodes, snapshot.StatusForbidden, "nodes is forbidden")
	_, ctx, _ := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	if n, ok := ctx.Notes()[ruleEtcdMin]; !ok || n.Skipped || !strings.Contains(n.Reason, "nodes were not read completely") {
		t.Fatalf("notes %v, want the rule partial naming the nodes", ctx.Notes())
	}
}

// On EKS (and AKS, GKE) etcd is the provider's: nothing to report, and
// not an unknown either.
func TestEtcdKnownBadVersionManagedReportsNothing(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-known-bad-version/no-etcd.yaml"))
	s.Nodes[0].Spec.ProviderID = "aws:///eu-west-1a/i-0abc"
	s.Nodes[0].Labels = map[string]string{"eks.amazonaws.com/nodegroup": "ng-1"}
	fs, ctx, _ := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	if len(fs) != 0 || len(ctx.Notes()) != 0 {
		t.Fatalf("findings %v notes %v: on EKS etcd is the provider's", fs, ctx.Notes())
	}
}

func TestEtcdKnownBadVersionEtcdManagerIsPartial(t *testing.T) {
	s := checktest.Load(t, "etcd-known-bad-version/clean.yaml")
	s.Pods[0].Spec.Containers = slices.Clone(s.Pods[0].Spec.Containers) // loaded pods share equal containers
	s.Pods[0].Spec.Containers[0].Image = "registry.k8s.io/etcdadm/etcd-manager-slim:v3.0.20250803"
	_, ctx, _ := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	if n, ok := ctx.Notes()[ruleEtcdMin]; !ok || n.Skipped {
		t.Fatalf("notes %v: kOps etcd-manager's tag is not etcd's version", ctx.Notes())
	}
}
