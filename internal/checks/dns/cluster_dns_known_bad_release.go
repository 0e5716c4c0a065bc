package dns

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	knownBadID     = "cluster-dns-known-bad-release"
	ruleKnownBad   = "release-with-known-defect"
	caseKnownBad   = "coredns-known-bad-releases-2019-2023"
	caseDnsmasq    = "kube-dns-dnsmasq-regressions-gke-dns-timeouts-2021-2023"
	knownBadSource = "data/cluster-dns-known-bad-release.yaml"
	tmpDir         = "/tmp"
	severityHigh   = "high"
)

//go:embed data/cluster-dns-known-bad-release.yaml
var knownBadData []byte

// badRelease is one cluster DNS release its maintainers reverted or told
// users to avoid.
type badRelease struct {
	ID             string   `json:"id"`
	Image          string   `json:"image"`
	Case           string   `json:"case"`
	Versions       []string `json:"versions"`
	VendorSuffixes []string `json:"vendorSuffixes"`
	Severity       string   `json:"severity"`
	// UnlessTmpVolume: the defect is avoided when the container mounts a
	// volume at /tmp.
	UnlessTmpVolume bool     `json:"unlessTmpVolume"`
	Note            string   `json:"note"`
	Sources         []string `json:"sources"`
}

type knownBadFacts struct {
	Releases []*badRelease `json:"releases"`
}

var loadKnownBad = check.Facts(knownBadSource, knownBadData, func(f *knownBadFacts) error {
	if len(f.Releases) == 0 {
		return fmt.Errorf("%s: no releases", knownBadSource)
	}
	for _, r := range f.Releases {
		if r.Image == "" || r.Case == "" || len(r.Versions) == 0 || len(r.Sources) == 0 ||
			(r.Severity != severityHigh && r.Severity != "medium") {
			return fmt.Errorf("%s: %s needs an image, a case, versions, sources and a severity of high or medium", knownBadSource, r.ID)
		}
	}
	return nil
})

// clusterDNSKnownBadReleaseCheck reads the releases the cluster DNS
// Deployment's containers run: which release a cluster runs usually comes
// with its installer, provider or an upgrade, not a choice, and a release
// with a known defect (CoreDNS 1.3.1's crash when the API goes away, a
// kube-dns build of a buggy dnsmasq) reaches many clusters at once.
func clusterDNSKnownBadReleaseCheck() check.Check {
	var cases []string
	if f, err := loadKnownBad(); err == nil {
		for _, r := range f.Releases {
			if !slices.Contains(cases, r.Case) {
				cases = append(cases, r.Case)
			}
		}
	}
	return check.Check{
		ID:       knownBadID,
		Title:    "Cluster DNS release with a defect its maintainers reverted or told users to avoid",
		Severity: finding.High,
		Description: "Reads the image tags of the cluster DNS Deployment's containers (kube-system, k8s-app=kube-dns) and " +
			"looks them up in a table of releases with known defects (data/cluster-dns-known-bad-release.yaml, every row " +
			"sourced). CoreDNS: 1.3.1 exits when its API connection fails, so an API server restart takes down every " +
			"replica (high, unless a volume is mounted at /tmp, the shipped workaround); 1.8.5's reload regression and " +
			"1.11.0's performance regression, which Kubernetes skipped (medium). kube-dns: the k8s-dns-dnsmasq-nanny " +
			"releases whose dnsmasq had resolver bugs, 1.17.0 (dnsmasq 2.83) and 1.22.13 to 1.22.15 (2.87), GKE's " +
			"-gke.N builds of them included (medium). Other vendor builds (a tag with a suffix, such as -eksbuild.1) " +
			"are not judged. Cannot see: a defect fixed in a rebuilt image under the same tag.",
		Reads: check.Needs(snapshot.Deployments),
		Rules: []check.Rule{
			{ID: ruleKnownBad, Summary: "the cluster DNS Deployment runs no release with a known defect",
				Needs: []snapshot.Resource{snapshot.Deployments}},
		},
		// The kube-dns case is detected, not prevented: the reporters' GKE
		// upgrades brought the suspect build, and which build an upgrade
		// brings is not in the API before it runs.
		Cases: check.Graded(cases, check.Prevents(caseKnownBad), check.Detects(caseDnsmasq)),
		Run:   runClusterDNSKnownBadRelease,
	}
}

func runClusterDNSKnownBadRelease(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKnownBad()
	if err != nil {
		return nil, err
	}
	d := corednsDeployment(ctx.Snapshot)
	if d == nil {
		if ctx.CompleteIn(snapshot.Deployments, "kube-system") {
			return nil, nil // cluster DNS is not a kube-system Deployment here
		}
		return nil, check.NotEvaluated("no cluster DNS Deployment (k8s-app=kube-dns in kube-system) in the input")
	}
	var out []finding.Finding
	cs := d.Spec.Template.Spec.Containers
	for i := range cs {
		c := &cs[i]
		row, version := knownBadRow(facts, c.Image)
		if row == nil || row.UnlessTmpVolume && tmpMounted(c) {
			continue // not listed, or the workaround is in place
		}
		out = append(out, knownBadFinding(d.Name, check.Ref("apps/v1", "Deployment", d), c, row, version))
	}
	return out, nil
}

// knownBadRow finds the row listing the image's release, and the release.
func knownBadRow(facts *knownBadFacts, image string) (*badRelease, string) {
	name := check.ImageName(image)
	_, tag, _ := check.ImageParts(image)
	tag = strings.TrimPrefix(tag, "v")
	for _, r := range facts.Releases {
		if r.Image != name {
			continue
		}
		for _, v := range r.Versions {
			if tag == v {
				return r, v
			}
			for _, s := range r.VendorSuffixes {
				if strings.HasPrefix(tag, v+s) {
					return r, v
				}
			}
		}
	}
	return nil, ""
}

func knownBadFinding(deployment string, ref finding.ObjectRef, c *corev1.Container, row *badRelease, version string) finding.Finding {
	sev := finding.Medium
	if row.Severity == severityHigh {
		sev = finding.High
	}
	base := "spec.template.spec.containers[name=" + c.Name + "]."
	f := finding.Finding{
		Check: knownBadID, Rule: ruleKnownBad, Severity: sev, Cases: []string{row.Case},
		Objects: []finding.ObjectRef{ref},
		Title:   fmt.Sprintf("Cluster DNS container %s runs %s %s, a release with a known defect", c.Name, row.Image, version),
		Message: strings.TrimSpace(row.Note),
	}
	fields := []finding.Field{finding.Value(base+"image", c.Image)}
	switch {
	case row.UnlessTmpVolume:
		fields = append(fields, finding.Absent(base+"volumeMounts[mountPath=/tmp]"))
		f.Message += fmt.Sprintf(" Container %s of Deployment kube-system/%s mounts nothing at %s.", c.Name, deployment, tmpDir)
		f.Remediation = "Move CoreDNS to a release its maintainers list as fixed (1.4.0 or later; current releases are " +
			"better), through the installer that owns it (kubeadm upgrade, kops, the managed add-on); until then add " +
			"an emptyDir volume mounted at /tmp to the CoreDNS container. Restart the API server on a test cluster " +
			"afterwards and watch the CoreDNS pods stay Running."
	case row.Image == "coredns":
		f.Remediation = "Move CoreDNS to the next patch release its maintainers recommend (1.8.6 for 1.8.5, 1.11.1 for " +
			"1.11.0) through the installer or chart that owns it."
	default:
		f.Remediation = "Move kube-dns to a release whose dnsmasq has the fix (1.17.1 or later for 2.83, 1.22.16 or " +
			"later for 2.87); on GKE, where the build comes with the cluster version, upgrade to a version that ships " +
			"it, and until then give kube-dns more replicas through the kube-dns-autoscaler ConfigMap."
	}
	f.AddEvidence(finding.Quote(ref, fields...))
	f.Evidence = append(f.Evidence, "release row "+row.ID+"; sources: "+strings.Join(row.Sources, ", "))
	return f
}

// tmpMounted reports whether the container mounts a volume at /tmp.
func tmpMounted(c *corev1.Container) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return strings.TrimSuffix(m.MountPath, "/") == tmpDir
	})
}
