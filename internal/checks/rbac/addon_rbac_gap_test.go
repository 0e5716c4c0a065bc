package rbac

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestChecksRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestAddonRBACGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/gap.yaml"))
	fs, ctx, ok := checktest.Run(t, addonRBACGapCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	var coredns, ca *finding.Finding
	for i := range fs {
		switch fs[i].Objects[0].Name {
		case "coredns":
			coredns = &fs[i]
		case "cluster-autoscaler":
			ca = &fs[i]
		}
	}
	if coredns == nil || coredns.Severity != finding.High || !strings.Contains(coredns.Title, "list endpointslices.discovery.k8s.io") {
		t.Errorf("CoreDNS finding: %+v", coredns)
	} else if !strings.Contains(strings.Join(coredns.Evidence, "\n"), "only in namespace kube-system") {
		t.Errorf("the RoleBinding's namespace-only grant is not in the evidence: %v", coredns.Evidence)
	}
	if ca == nil || ca.Severity != finding.Medium || !strings.Contains(ca.Title, "csistoragecapacities") ||
		strings.Contains(ca.Title, "csinodes") {
		t.Errorf("cluster-autoscaler finding: %+v", ca)
	}
	if len(fs) != 2 || len(ctx.Notes()) != 0 {
		t.Errorf("%d findings, notes %v", len(fs), ctx.Notes())
	}
}

// Open world: from plain files the ClusterRoles are not complete, so a
// missing grant is unknown, not a finding.
func TestAddonRBACGapIncompleteRBACIsPartial(t *testing.T) {
	s := checktest.Load(t, "addon-rbac-gap/gap.yaml")
	fs, ctx, _ := checktest.Run(t, addonRBACGapCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v on incomplete RBAC", fs)
	}
	if _, ok := ctx.Notes()[ruleAddonRBAC]; !ok {
		t.Error("the rule must be partial")
	}
}

func TestAddonRBACGapClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/clean.yaml"))
	checktest.Quiet(t, addonRBACGapCheck(), s)
}

// A rule limited by resourceNames does not allow listing.
func TestAddonRBACGapResourceNamesDoNotList(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/clean.yaml"))
	for i := range s.ClusterRoles {
		if s.ClusterRoles[i].Name == "coredns-endpointslices" {
			s.ClusterRoles[i].Rules[0].ResourceNames = []string{"one"}
		}
	}
	fs, _, _ := checktest.Run(t, addonRBACGapCheck(), s)
	if len(fs) != 1 || fs[0].Objects[0].Name != "coredns" {
		t.Errorf("findings %+v, want the CoreDNS gap", fs)
	}
}

// Mirrored images (k3s runs rancher/mirrored-coredns-coredns) are the add-on.
func TestAddonRBACGapMirroredImage(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/gap.yaml"))
	s.Deployments[1].Spec.Template.Spec.Containers[0].Image = "rancher/mirrored-coredns-coredns:1.12.1"
	fs, _, _ := checktest.Run(t, addonRBACGapCheck(), s)
	if !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") {
		t.Errorf("findings %+v: the mirrored CoreDNS image is CoreDNS", fs)
	}
}

// TestAddonRBACGapEvidenceItems: the findings quote the add-on's image
// and service account, the ClusterRoleBinding subject that binds it, the
// bound ClusterRole's rules (from which the missing verbs are derived) and
// the RoleBinding that grants the need in one namespace, as the fixture
// writes them, and resolve against it.
func TestAddonRBACGapEvidenceItems(t *testing.T) {
	const file = "addon-rbac-gap/gap.yaml"
	fs, _, _ := checktest.Run(t, addonRBACGapCheck(), checktest.Complete(checktest.Load(t, file)))
	want := map[string][]string{
		"coredns": {
			"Deployment/kube-system/coredns: spec.template.spec.containers[name=coredns].image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:v1.8.3-eksbuild.1, " +
				"spec.template.spec.serviceAccountName=coredns",
			"ClusterRoleBinding/system:coredns: roleRef.name=system:coredns, subjects[0].kind=ServiceAccount, subjects[0].name=coredns, subjects[0].namespace=kube-system",
			`ClusterRole/system:coredns: rules=[{"apiGroups":[""],"resources":["endpoints","services","pods","namespaces"],"verbs":["list","watch"]},` +
				`{"apiGroups":[""],"resources":["nodes"],"verbs":["get"]}]`,
			"RoleBinding/kube-system/coredns-slices: roleRef.kind=Role, roleRef.name=coredns-slices",
		},
		"cluster-autoscaler": {
			"Deployment/kube-system/cluster-autoscaler: spec.template.spec.containers[name=cluster-autoscaler].image=registry.k8s.io/autoscaling/cluster-autoscaler:v1.21.0, " +
				"spec.template.spec.serviceAccountName=cluster-autoscaler",
			"ClusterRoleBinding/cluster-autoscaler: roleRef.name=cluster-autoscaler, subjects[0].kind=ServiceAccount, subjects[0].name=cluster-autoscaler, subjects[0].namespace=kube-system",
			`ClusterRole/cluster-autoscaler: rules=[{"apiGroups":["storage.k8s.io"],"resources":["storageclasses","csinodes"],"verbs":["watch","list","get"]},` +
				`{"apiGroups":[""],"resources":["pods","services","nodes","persistentvolumeclaims","persistentvolumes","replicationcontrollers"],"verbs":["watch","list","get"]}]`,
		},
	}
	if len(fs) != len(want) {
		t.Fatalf("findings %+v", fs)
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if w := want[f.Objects[0].Name]; !slices.Equal(got, w) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 7 {
		t.Errorf("%d items resolved, want 7", n)
	}
}
