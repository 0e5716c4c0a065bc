package versions

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	etcdID      = "etcd-known-bad-version"
	caseEtcd35  = "etcd-35-data-inconsistency-not-for-production-2022"
	caseEtcd36  = "etcd-3-5-to-3-6-upgrade-learner-and-zombie-member-issues-2025"
	ruleEtcdMin = "etcd-minimum-version"
	// ruleEtcdPath: members below the patch release etcd requires before
	// an upgrade to the next minor (3.5.26 before 3.6).
	ruleEtcdPath = "etcd-upgrade-path"
	etcdNS       = "kube-system"
	etcdMaxPods  = 10
)

//go:embed data/etcd-known-bad-version.yaml
var etcdData []byte

type etcdFacts struct {
	Minimums []struct {
		Line    string   `json:"line"`
		Minimum string   `json:"minimum"`
		Sources []string `json:"sources"`
	} `json:"minimums"`
	Advisories []struct {
		ID      string   `json:"id"`
		From    string   `json:"from"`
		Below   string   `json:"below"`
		Summary string   `json:"summary"`
		Sources []string `json:"sources"`
	} `json:"advisories"`
	UpgradePaths []etcdUpgradePath `json:"upgradePaths"`
}

// etcdUpgradePath is the patch release a line must reach before an
// upgrade to the next minor.
type etcdUpgradePath struct {
	Line    string   `json:"line"`
	To      string   `json:"to"`
	Minimum string   `json:"minimum"`
	Summary string   `json:"summary"`
	Case    string   `json:"case"`
	Sources []string `json:"sources"`
}

var loadEtcdFacts = check.Facts("data/etcd-known-bad-version.yaml", etcdData, func(f *etcdFacts) error {
	for _, m := range f.Minimums {
		if _, ok := check.ParseKubeVersion(m.Minimum); !ok {
			return fmt.Errorf("data/etcd-known-bad-version.yaml: bad minimum %q", m.Minimum)
		}
	}
	for _, a := range f.Advisories {
		if _, err := parseAll([]string{a.From, a.Below}); err != nil {
			return fmt.Errorf("data/etcd-known-bad-version.yaml: %s: %w", a.ID, err)
		}
	}
	for _, u := range f.UpgradePaths {
		m, ok := check.ParseKubeVersion(u.Minimum)
		if !ok || m.MinorString() != u.Line || u.To == "" || u.Case == "" || len(u.Sources) == 0 {
			return fmt.Errorf("data/etcd-known-bad-version.yaml: upgrade path from %q needs a minimum on its line, a target, a case and sources", u.Line)
		}
	}
	return nil
})

// etcdKnownBadVersionCheck finds self-managed etcd members (static pods in
// kube-system) on releases with announced data-inconsistency bugs, or below
// the minimum the Kubernetes documentation recommends for production.
func etcdKnownBadVersionCheck() check.Check {
	return check.Check{
		ID:       etcdID,
		Title:    "etcd below the Kubernetes documentation's minimum, on a release with data-inconsistency bugs, or below the release an upgrade to 3.6 needs",
		Severity: finding.High,
		Description: "Reads the etcd pods in kube-system (image name etcd, as kubeadm's static pods run it) and parses the " +
			"image tag. High: a release with an announced data-inconsistency bug (3.5.0-3.5.2, which the etcd project said not " +
			"to run in production; 3.5.3-3.5.5; 3.4.20-3.4.21) or a line older than 3.4. Medium: below the minimum the " +
			"Kubernetes documentation recommends for production today (3.4.29+, 3.5.11+). etcd outside the cluster (external " +
			"etcd, k3s's embedded datastore) and kOps etcd-manager pods, whose image tag is not the etcd version, are not " +
			"visible: without an etcd pod whose version can be read, the rule is partial, never pass. On AKS, EKS and GKE " +
			"etcd belongs to the provider, who keeps it patched: the check reports nothing there and passes, as no etcd is " +
			"the cluster owner's. Vendor builds with backported fixes are not seen. Second rule: a 3.5 member below 3.5.26, " +
			"which SIG-etcd names the only safe start of an upgrade to 3.6 (from 3.5.1-3.5.19 voters can return as " +
			"learners and block the start; from 3.5.25 or earlier removed members can return and join consensus): medium, " +
			"or added to the member's finding above.",
		// Nodes only tell a managed control plane (no etcd pod to judge)
		// from one whose etcd is not in the input; without them the rule
		// says it could not judge.
		Reads: []check.Input{{Resource: snapshot.Pods}, check.Optional(snapshot.Nodes)},
		Rules: []check.Rule{
			{ID: ruleEtcdMin, Summary: "every etcd member visible in kube-system is at or above the documented minimum and outside the bad ranges",
				Needs: []snapshot.Resource{snapshot.Pods}},
			{ID: ruleEtcdPath, Summary: "no etcd member visible in kube-system is below the release etcd requires before an upgrade to the next minor",
				Needs: []snapshot.Resource{snapshot.Pods}},
		},
		Cases: check.Prevents(caseEtcd35, caseEtcd36),
		Run:   runEtcdKnownBadVersion,
	}
}

func runEtcdKnownBadVersion(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadEtcdFacts()
	if err != nil {
		return nil, err
	}
	var out []finding.Finding
	found, unreadable := 0, 0
	for _, p := range s.Index().PodsInNamespace(etcdNS) {
		for _, c := range p.Spec.Containers {
			name := check.ImageName(c.Image)
			if strings.HasPrefix(name, "etcd-manager") {
				unreadable++ // kOps: the tag is etcd-manager's, not etcd's
				continue
			}
			if name != "etcd" {
				continue
			}
			_, tag, _ := check.ImageParts(c.Image)
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				unreadable++
				continue
			}
			found++
			if f, bad := etcdFinding(facts, p, c.Name, c.Image, tag, v); bad {
				out = append(out, f)
			}
		}
	}
	switch {
	case found > 0 && unreadable == 0:
	case unreadable > 0:
		for _, r := range []string{ruleEtcdMin, ruleEtcdPath} {
			ctx.Incomplete(r, "%s in kube-system run etcd from an image whose tag is not an etcd version (kOps etcd-manager or a digest-only reference)",
				check.Plural(unreadable, "container", "containers"))
		}
	case check.ClusterManagedProvider(s.Nodes) != "":
		// The provider runs etcd and keeps it patched: no etcd here is the
		// cluster owner's to judge or fix, so there is no gap to be unsure
		// of. The model has no "does not apply" status, and marking the
		// rule skipped would leave every managed cluster's audit unknown
		// for a component the owner cannot touch.
	default:
		for _, r := range []string{ruleEtcdMin, ruleEtcdPath} {
			ctx.Unknowable(r, "no etcd pod in kube-system in the input: etcd may run outside the cluster (external etcd, "+
				"an embedded datastore), and its version cannot be judged")
			if !ctx.Complete(snapshot.Nodes) {
				ctx.Incomplete(r, "nodes were not read completely: a managed control plane, whose etcd is the provider's, could not be recognised")
			}
		}
	}
	return out, nil
}

// etcdFinding is the member's finding: its data-bug or minimum verdict,
// with the upgrade-path one added (or alone, medium, when it has none).
func etcdFinding(facts *etcdFacts, p *snapshot.Pod, container, image, tag string, v check.KubeVersion) (finding.Finding, bool) {
	f, bad := etcdVersionFinding(facts, p, container, image, tag, v)
	for _, u := range facts.UpgradePaths {
		min, _ := check.ParseKubeVersion(u.Minimum)
		if v.MinorString() != u.Line || !v.Less(min) {
			continue
		}
		path := fmt.Sprintf("Before an upgrade to %s, SIG-etcd requires %s or later with every member healthy: %s.",
			u.To, u.Minimum, strings.TrimSpace(u.Summary))
		f.Evidence = append(f.Evidence, fmt.Sprintf("upgrade path to %s: %s or later first; %s", u.To, u.Minimum, strings.Join(u.Sources, ", ")))
		f.Cases = append(f.Cases, u.Case)
		if bad {
			f.Message += " " + path
			f.Remediation += fmt.Sprintf(" Take it to %s or later before any upgrade to %s.", u.Minimum, u.To)
			continue
		}
		bad = true
		f.Cases = []string{u.Case}
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("etcd %s on %s is below %s, the only safe start of an upgrade to %s", v, p.Name, u.Minimum, u.To)
		f.Message = fmt.Sprintf("etcd member %s runs %s. %s", p.Name, v, path)
		f.Remediation = fmt.Sprintf("Upgrade etcd to %s or later one member at a time after a snapshot backup, confirm every member "+
			"is healthy, and only then move to %s; if your packaging has no %s yet, delay the %s upgrade.", u.Minimum, u.To, u.Minimum, u.To)
		f = caveat(f, vendorBuild(strings.TrimSuffix(tag, "-0")))
	}
	return f, bad
}

func etcdVersionFinding(facts *etcdFacts, p *snapshot.Pod, container, image, tag string, v check.KubeVersion) (finding.Finding, bool) {
	ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
	f := finding.Finding{Check: etcdID, Objects: []finding.ObjectRef{ref}, Cases: []string{caseEtcd35}}
	f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("Pod", "", container, "image"), image)))
	if p.Spec.NodeName != "" {
		f.Objects = append(f.Objects, check.NodeRef(p.Spec.NodeName))
	}
	vendor := vendorBuild(strings.TrimSuffix(tag, "-0")) // kubeadm's own images are tagged 3.5.N-0
	for _, a := range facts.Advisories {
		from, _ := check.ParseKubeVersion(a.From)
		below, _ := check.ParseKubeVersion(a.Below)
		if v.Less(from) || !v.Less(below) {
			continue
		}
		f.Severity = finding.High
		f.Title = fmt.Sprintf("etcd %s on %s has an announced data-inconsistency bug", v, p.Name)
		f.Message = fmt.Sprintf("etcd member %s runs %s, in the range %s to below %s: %s.", p.Name, v, a.From, a.Below, strings.TrimSpace(a.Summary))
		f.Evidence = append(f.Evidence, "advisory "+a.ID+": "+strings.Join(a.Sources, ", "))
		f.Remediation = "Upgrade etcd to the newest patch of its line (at least the documented minimum) one member at a time, " +
			"after a snapshot backup; on 3.5, turn on the corruption checks (--experimental-initial-corrupt-check and " +
			"--experimental-corrupt-check-time, or their non-experimental names on newer releases)."
		return caveat(f, vendor), true
	}
	var oldest check.KubeVersion
	for i, m := range facts.Minimums {
		min, _ := check.ParseKubeVersion(m.Minimum)
		if i == 0 || min.Less(oldest) {
			oldest = min
		}
		if min.MinorString() != v.MinorString() || !v.Less(min) {
			continue
		}
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("etcd %s on %s is below the %s minimum the Kubernetes docs recommend", v, p.Name, m.Minimum)
		f.Message = fmt.Sprintf("etcd member %s runs %s. The Kubernetes documentation recommends at least %s on the %s line for "+
			"production; releases below it miss fixes for bugs that can make members diverge or lose availability.", p.Name, v, m.Minimum, m.Line)
		f.Evidence = append(f.Evidence, "documented minimum: "+strings.Join(m.Sources, ", "))
		f.Remediation = "Upgrade etcd to " + m.Minimum + " or later, one member at a time after a snapshot backup (kubeadm: the etcd image of a current kubeadm release)."
		return caveat(f, vendor), true
	}
	if v.Major == oldest.Major && v.Minor < oldest.Minor || v.Major < oldest.Major {
		f.Severity = finding.High
		f.Title = fmt.Sprintf("etcd %s on %s is on a line the Kubernetes docs no longer list", v, p.Name)
		f.Message = fmt.Sprintf("etcd member %s runs %s, older than every line with a documented production minimum (the oldest is %s). "+
			"It misses the 3.4 and 3.5 data-consistency fixes and is out of etcd's support.", p.Name, v, oldest)
		f.Remediation = "Upgrade etcd line by line (3.3 to 3.4 to 3.5) following etcd's upgrade guides, after a snapshot backup."
		return caveat(f, vendor), true
	}
	return f, false
}

// caveat says that a vendor build may carry the fix.
func caveat(f finding.Finding, vendor bool) finding.Finding {
	if vendor {
		f.Message += " The tag carries a vendor build marker: the vendor may have backported fixes, which the version does not show."
	}
	return f
}
