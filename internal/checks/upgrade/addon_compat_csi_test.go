package upgrade

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestAddonCompatCSI: from 1.32 to 1.33 the Rook operator v1.16.4 (Rook
// supports v1.27 through v1.32) and Trident 24.10.1 (range [1.25, 1.32])
// are high "fix before" findings on every workload that runs them, citing
// the CSI case and the pinned sources; the managed providers' CSI drivers
// (AKS azuredisk, EKS EBS) are not judged and leave no unknown.
func TestAddonCompatCSI(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.32.4")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.33"))
	got := addonFindings(fs)
	if len(got) != 4 {
		t.Fatalf("at 1.33: want the Rook operator, rook-discover and Trident's controller and node, got %+v", got)
	}
	for _, o := range [][3]string{{"Deployment", "rook-ceph", "rook-ceph-operator"}, {"DaemonSet", "rook-ceph", "rook-discover"},
		{"Deployment", "trident", "trident-controller"}, {"DaemonSet", "trident", "trident-node-linux"}} {
		if !checktest.HasObject(got, o[0], o[1], o[2]) {
			t.Errorf("no finding on %v", o)
		}
	}
	for _, f := range got {
		if f.Severity != finding.High || f.Preflight != finding.PreflightBefore || !slices.Contains(f.Cases, caseCSIDriver) {
			t.Errorf("a stated support range is high, fix before, citing %s: %+v", caseCSIDriver, f)
		}
		ev := strings.Join(f.Evidence, " ")
		switch {
		case strings.HasPrefix(f.Title, "Rook v1.16.4 supports Kubernetes up to 1.32, not 1.33"):
			if !strings.Contains(f.Message, "1.27 to 1.32") || !strings.Contains(ev, "https://github.com/rook/rook/blob/v1.16.") {
				t.Errorf("Rook finding: %s / %s", f.Message, ev)
			}
		case strings.HasPrefix(f.Title, "Trident 24.10.1 supports Kubernetes up to 1.32, not 1.33"):
			if !strings.Contains(f.Message, "1.25 to 1.32") || !strings.Contains(ev, "https://github.com/NetApp/trident/blob/v24.10.1/config/config.go") {
				t.Errorf("Trident finding: %s / %s", f.Message, ev)
			}
		default:
			t.Errorf("unexpected finding %q", f.Title)
		}
	}
	if checktest.HasObject(got, "DaemonSet", "kube-system", "csi-azuredisk-node") || checktest.HasObject(got, "Deployment", "kube-system", "ebs-csi-controller") {
		t.Errorf("a managed provider's CSI driver was judged: %+v", got)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" || n.Skipped {
		t.Errorf("every matched image is tabled, yet %+v", n)
	}

	// One minor lower, both releases list the target: no finding, evaluated.
	s = at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.31.6")
	fs, ctx = runWith(t, upgradePreflightCheck(), s, target("1.32"))
	if got := addonFindings(fs); len(got) != 0 {
		t.Errorf("at 1.32 both releases list the target: %+v", got)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" {
		t.Errorf("note = %+v", n)
	}
}

// TestAddonCompatCSICurrent: Rook v1.20.6 and Trident 26.06.0 list 1.36,
// so an upgrade from 1.35 to 1.36 says nothing about them.
func TestAddonCompatCSICurrent(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers-current.yaml")), "v1.35.1")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.36"))
	if got := addonFindings(fs); len(got) != 0 {
		t.Errorf("current releases list 1.36: %+v", got)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" || n.Skipped {
		t.Errorf("note = %+v", n)
	}
}

// TestAddonCompatCSIWithoutTarget: without --target-version the preflight
// is not evaluated and says nothing about the old storage releases.
func TestAddonCompatCSIWithoutTarget(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.32.4")
	fs, err := upgradePreflightCheck().Run(&check.Context{Snapshot: s})
	if err == nil || len(fs) != 0 {
		t.Fatalf("without a target: %v, %+v", err, fs)
	}
}

// TestAddonCompatCSIUnknownRelease: a Rook release whose prerequisites
// state only a minimum (v1.12.5: "v1.22 or higher") and a Trident release
// before the table (21.10.1) are unknown: no finding, the rule partial.
func TestAddonCompatCSIUnknownRelease(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.32.4")
	older := map[string]string{"rook-ceph-operator": "docker.io/rook/ceph:v1.12.5", "rook-discover": "rook/ceph:v1.12.5",
		"trident-controller": "netapp/trident:21.10.1", "trident-node-linux": "netapp/trident:21.10.1"}
	for i := range s.Deployments {
		if im, ok := older[s.Deployments[i].Name]; ok {
			s.Deployments[i].Spec.Template.Spec.Containers[0].Image = im
		}
	}
	for i := range s.DaemonSets {
		if im, ok := older[s.DaemonSets[i].Name]; ok {
			s.DaemonSets[i].Spec.Template.Spec.Containers[0].Image = im
		}
	}
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.33"))
	if got := addonFindings(fs); len(got) != 0 {
		t.Errorf("unlisted releases were judged: %+v", got)
	}
	n := ctx.Notes()[ruleAddonCompat]
	if !strings.Contains(n.Reason, "Rook v1.12.5") || !strings.Contains(n.Reason, "Trident 21.10.1") {
		t.Errorf("unknown releases, yet note = %+v", n)
	}
}

// TestAddonCompatCSIRowsPinned: the Rook and Trident tables state support
// (basis supported), cite the CSI case, and every row is sourced only by
// the project's own file at a tag the row lists, so each range is the one
// that release shipped. The upper bound moved within a line (Rook v1.18.3,
// Trident 24.10.1), which the rows keep apart.
func TestAddonCompatCSIRowsPinned(t *testing.T) {
	f, err := loadAddonFacts()
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]*regexp.Regexp{
		"Rook":    regexp.MustCompile(`^https://github\.com/rook/rook/blob/(v[0-9.]+)/Documentation/Getting-Started/Prerequisites/prerequisites\.md$`),
		"Trident": regexp.MustCompile(`^https://github\.com/NetApp/trident/blob/v([0-9.]+)/config/config\.go$`),
	}
	for name, re := range pinned {
		var a *addonTable
		for i := range f.Addons {
			if f.Addons[i].Name == name {
				a = &f.Addons[i]
			}
		}
		if a == nil {
			t.Errorf("no %s table", name)
			continue
		}
		if a.Basis != basisSupported || a.Case != caseCSIDriver || len(a.Releases) == 0 {
			t.Errorf("%s: basis %q, case %q, %d rows", name, a.Basis, a.Case, len(a.Releases))
		}
		for _, r := range a.Releases {
			if len(r.Lines) != 0 || len(r.Sources) == 0 {
				t.Errorf("%s %v: rows are per tag and sourced, got lines %v, sources %v", name, r.Versions, r.Lines, r.Sources)
			}
			for _, src := range r.Sources {
				m := re.FindStringSubmatch(src)
				if m == nil || !slices.Contains(r.Versions, m[1]) {
					t.Errorf("%s %v: source %s is not the project's file at a tag of the row", name, r.Versions, src)
				}
			}
		}
	}
	for _, c := range []struct{ image, tag, newest string }{
		{"docker.io/rook/ceph", "v1.18.2", "1.33"}, {"rook/ceph", "v1.18.3", "1.34"}, {"rook/ceph", "v1.20.6", "1.36"},
		{"netapp/trident", "24.10.0", "1.31"}, {"docker.io/netapp/trident", "24.10.1", "1.32"}, {"netapp/trident", "26.06.0", "1.36"},
	} {
		a := f.byImage[c.image]
		if a == nil {
			t.Errorf("%s is not matched", c.image)
			continue
		}
		if r := a.release(c.tag); r == nil || r.newest.MinorString() != c.newest {
			t.Errorf("%s:%s: want newest %s, got %+v", c.image, c.tag, c.newest, r)
		}
	}
	for _, image := range []string{"quay.io/cephcsi/cephcsi", "quay.io/ceph/ceph", "netapp/trident-autosupport",
		"mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi", "registry.k8s.io/provider-aws/aws-ebs-csi-driver"} {
		if f.byImage[image] != nil {
			t.Errorf("%s is matched, but no table of it was read", image)
		}
	}
}
