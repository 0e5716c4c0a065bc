package versions

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
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
	for name, want := range map[string]finding.Severity{"etcd-cp-1": finding.High, "etcd-cp-2": finding.Medium, "etcd-cp-3": finding.Medium} {
		if got, found := sevOf(fs, "Pod", "kube-system", name); !found || got != want {
			t.Errorf("%s: %v (found %v), want %v", name, got, found, want)
		}
	}
	// 3.5.1 and 3.5.9 cite both cases (their bug or minimum, and the 3.6
	// path); 3.5.16 is above the minimum and cites only the 3.6 path.
	for _, f := range fs {
		want := []string{caseEtcd35, caseEtcd36}
		if strings.Contains(f.Title, "etcd-cp-3") {
			want = []string{caseEtcd36}
		}
		if !slices.Equal(f.Cases, want) {
			t.Errorf("%s: cases %v, want %v", f.Title, f.Cases, want)
		}
	}
	if len(fs) != 3 {
		t.Errorf("findings %+v, want one per member", fs)
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
	s.Pods[0].Spec.Own()
	s.Pods[0].Spec.Containers = slices.Clone(s.Pods[0].Spec.Containers) // loaded pods share equal containers
	s.Pods[0].Spec.Containers[0].Image = "registry.k8s.io/etcdadm/etcd-manager-slim:v3.0.20250803"
	_, ctx, _ := checktest.Run(t, etcdKnownBadVersionCheck(), s)
	if n, ok := ctx.Notes()[ruleEtcdMin]; !ok || n.Skipped {
		t.Fatalf("notes %v: kOps etcd-manager's tag is not etcd's version", ctx.Notes())
	}
}

// TestEtcdUpgradePath: 3.5 members below 3.5.26 are medium before a move
// to 3.6, citing the 3.5-to-3.6 case as prevented; at 3.5.26 the rule is
// quiet.
func TestEtcdUpgradePath(t *testing.T) {
	c := etcdKnownBadVersionCheck()
	if r, ok := c.Relation(caseEtcd36); !ok || r != check.RelPrevents {
		t.Fatalf("the check links %s as %q (cited %v), want prevents", caseEtcd36, r, ok)
	}
	fs, _, _ := checktest.Run(t, c, checktest.Complete(checktest.Load(t, "etcd-known-bad-version/before-3-6-upgrade.yaml")))
	if len(fs) != 3 {
		t.Fatalf("findings %+v, want one per member", fs)
	}
	for _, f := range fs {
		if f.Severity != finding.Medium || !slices.Equal(f.Cases, []string{caseEtcd36}) || !strings.Contains(f.Title, "below 3.5.26") {
			t.Errorf("%s: %v, cases %v; want medium citing only %s", f.Title, f.Severity, f.Cases, caseEtcd36)
		}
	}
	checktest.Quiet(t, c, checktest.Complete(checktest.Load(t, "etcd-known-bad-version/at-3-5-26.yaml")))
}
