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
	knownBadID       = "coredns-known-bad-release"
	ruleKnownBad     = "release-with-known-defect"
	caseKnownBad     = "coredns-known-bad-releases-2019-2023"
	knownBadSource   = "data/coredns-known-bad-release.yaml"
	tmpDir           = "/tmp"
	severityHighText = "high"
)

//go:embed data/coredns-known-bad-release.yaml
var knownBadData []byte

// badRelease is one CoreDNS release the maintainers told users to avoid.
type badRelease struct {
	ID              string   `json:"id"`
	Versions        []string `json:"versions"`
	Severity        string   `json:"severity"`
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
		if len(r.Versions) == 0 || len(r.Sources) == 0 || (r.Severity != severityHighText && r.Severity != "medium") {
			return fmt.Errorf("%s: %s needs versions, sources and a severity of high or medium", knownBadSource, r.ID)
		}
	}
	return nil
})

// corednsKnownBadReleaseCheck reads the release of the cluster DNS
// Deployment's CoreDNS image: which release a cluster runs usually comes
// with its installer or an upgrade, not a choice, and a release with a
// known defect (1.3.1's crash when the API goes away) reaches many
// clusters at once.
func corednsKnownBadReleaseCheck() check.Check {
	return check.Check{
		ID:       knownBadID,
		Title:    "CoreDNS release with a defect its maintainers told users to avoid",
		Severity: finding.High,
		Description: "Reads the image tag of the cluster DNS Deployment's CoreDNS container (kube-system, k8s-app=kube-dns) " +
			"and looks it up in a table of CoreDNS releases with known defects (data/coredns-known-bad-release.yaml, every " +
			"row sourced): 1.3.1 exits when its API connection fails, so an API server restart takes down every replica " +
			"(high, unless a volume is mounted at /tmp, the shipped workaround); 1.8.5's reload regression and 1.11.0's " +
			"performance regression, which Kubernetes skipped (medium). Vendor builds (a tag with a suffix, such as " +
			"-eksbuild.1) are other builds and are not judged. Cannot see: a defect fixed in a rebuilt image under the " +
			"same tag.",
		Reads: check.Needs(snapshot.Deployments),
		Rules: []check.Rule{
			{ID: ruleKnownBad, Summary: "the cluster DNS Deployment runs no CoreDNS release with a known defect",
				Needs: []snapshot.Resource{snapshot.Deployments}},
		},
		Cases: check.Prevents(caseKnownBad),
		Run:   runCorednsKnownBadRelease,
	}
}

func runCorednsKnownBadRelease(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKnownBad()
	if err != nil {
		return nil, err
	}
	d := corednsDeployment(ctx.Snapshot)
	if d == nil {
		if ctx.CompleteIn(snapshot.Deployments, "kube-system") {
			return nil, nil // cluster DNS is not a CoreDNS Deployment here
		}
		return nil, check.NotEvaluated("no CoreDNS Deployment (k8s-app=kube-dns in kube-system) in the input")
	}
	c := dnsContainer(d)
	if c == nil || check.ImageName(c.Image) != "coredns" {
		return nil, nil // kube-dns or another server: not CoreDNS
	}
	_, tag, _ := check.ImageParts(c.Image)
	version := strings.TrimPrefix(tag, "v")
	var row *badRelease
	for _, r := range facts.Releases {
		if slices.Contains(r.Versions, version) {
			row = r
		}
	}
	if row == nil {
		return nil, nil
	}
	spec := &d.Spec.Template.Spec
	base := "spec.template.spec.containers[name=" + c.Name + "]."
	if row.UnlessTmpVolume {
		if tmpMounted(c) {
			return nil, nil // the workaround is in place
		}
	}
	sev := finding.Medium
	if row.Severity == severityHighText {
		sev = finding.High
	}
	ref := check.Ref("apps/v1", "Deployment", d)
	f := finding.Finding{
		Check: knownBadID, Rule: ruleKnownBad, Severity: sev, Cases: []string{caseKnownBad},
		Objects: []finding.ObjectRef{ref},
		Title:   fmt.Sprintf("Cluster DNS runs CoreDNS %s, a release with a known defect", version),
		Message: strings.TrimSpace(row.Note),
	}
	fields := []finding.Field{finding.Value(base+"image", c.Image)}
	if row.UnlessTmpVolume {
		fields = append(fields, finding.Absent(base+"volumeMounts[mountPath=/tmp]"))
		f.Message += fmt.Sprintf(" Deployment kube-system/%s mounts nothing at %s (%d volumes in its pod template).", d.Name, tmpDir, len(spec.Volumes))
		f.Remediation = "Move CoreDNS to a release the maintainers list as fixed (1.4.0 or later; current releases are " +
			"better), through the installer that owns it (kubeadm upgrade, kops, the managed add-on); until then add " +
			"an emptyDir volume mounted at /tmp to the CoreDNS container. Restart the API server on a test cluster " +
			"afterwards and watch the CoreDNS pods stay Running."
	} else {
		f.Remediation = "Move CoreDNS to the next patch release its maintainers recommend (1.8.6 for 1.8.5, 1.11.1 for " +
			"1.11.0) through the installer or chart that owns it."
	}
	f.AddEvidence(finding.Quote(ref, fields...))
	f.Evidence = append(f.Evidence, "release row "+row.ID+"; sources: "+strings.Join(row.Sources, ", "))
	return []finding.Finding{f}, nil
}

// tmpMounted reports whether the container mounts a volume at /tmp.
func tmpMounted(c *corev1.Container) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return strings.TrimSuffix(m.MountPath, "/") == tmpDir
	})
}
