package dns

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	eksCorednsID     = "eks-coredns-version"
	ruleEKSCoredns   = "coredns-vs-eks-table"
	caseDFDSCoreDNS  = "dfds-eks-114-coredns-vendor-upgrade-crashloop-2020"
	eksCorednsSource = "data/eks-coredns-version.yaml"
)

//go:embed data/eks-coredns-version.yaml
var eksCorednsData []byte

type eksCorednsRow struct {
	Kubernetes string   `json:"kubernetes"`
	CoreDNS    string   `json:"coredns"`
	Sources    []string `json:"sources"`

	kube, coredns check.KubeVersion
}

// eksCorednsFacts is data/eks-coredns-version.yaml.
type eksCorednsFacts struct {
	Rows []*eksCorednsRow `json:"rows"`
}

var loadEKSCorednsRows = check.Facts(eksCorednsSource, eksCorednsData, func(f *eksCorednsFacts) error {
	for _, r := range f.Rows {
		var ok1, ok2 bool
		r.kube, ok1 = check.ParseKubeVersion(r.Kubernetes)
		r.coredns, ok2 = check.ParseKubeVersion(r.CoreDNS)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: bad row %q -> %q", eksCorednsSource, r.Kubernetes, r.CoreDNS)
		}
	}
	if len(f.Rows) == 0 {
		return fmt.Errorf("%s: no rows", eksCorednsSource)
	}
	return nil
})

// eksCorednsVersionCheck compares the CoreDNS image on an EKS cluster with
// the version the EKS user guide lists for its Kubernetes minor: on EKS the
// cluster owner upgrades CoreDNS after the control plane, and a CoreDNS
// left behind (or rolled back, as in DFDS's 1.14 upgrade) runs a build AWS
// no longer pairs with that control plane.
func eksCorednsVersionCheck() check.Check {
	return check.Check{
		ID:       eksCorednsID,
		Title:    "EKS CoreDNS older than the version AWS lists for the control plane's Kubernetes minor",
		Severity: finding.Medium,
		Description: "On EKS (an API server version with an -eks- build, or nodes of an EKS node group or Karpenter node " +
			"pool), reads the image tag of the cluster DNS Deployment (kube-system, k8s-app=kube-dns) and compares its " +
			"upstream CoreDNS version with the one the EKS user guide's CoreDNS table lists for the control plane's minor " +
			"(data/eks-coredns-version.yaml, one sourced row per minor from 1.13). Medium when CoreDNS is on an older " +
			"minor line than listed, low when only the patch is older; the -eksbuild.N suffix is not compared. For a " +
			"control plane newer than every row, the newest row is used as a lower bound (the table never lists an older " +
			"CoreDNS for a newer Kubernetes), and a CoreDNS at or above it is left unjudged (partial). Other clusters are " +
			"not judged and pass. Cannot see: whether the add-on is EKS-managed or self-managed (the EKS API, not " +
			"Kubernetes, says), and vendor-specific Corefile changes a version bump needs.",
		Reads: append(check.Needs(snapshot.Deployments), check.Optional(snapshot.Nodes), check.Optional(snapshot.Pods)),
		Rules: []check.Rule{
			{ID: ruleEKSCoredns, Summary: "on EKS, CoreDNS is at or above the version the EKS user guide lists for the control plane's minor",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.Nodes}},
		},
		Cases: check.Detects(caseDFDSCoreDNS),
		Run:   runEKSCorednsVersion,
	}
}

func runEKSCorednsVersion(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadEKSCorednsRows()
	if err != nil {
		return nil, err
	}
	rows := facts.Rows
	s := ctx.Snapshot
	eks, known := isEKS(ctx)
	if !eks {
		if !known {
			ctx.Incomplete(ruleEKSCoredns, "neither the API server version nor the nodes in the input say whether this is an EKS cluster")
		}
		return nil, nil
	}
	server, serverEv, ok := check.ServerVersion(s)
	if !ok {
		ctx.Incomplete(ruleEKSCoredns, "the control plane's Kubernetes version is not in the input")
		return nil, nil
	}
	d := corednsDeployment(s)
	if d == nil {
		if !ctx.CompleteIn(snapshot.Deployments, "kube-system") {
			ctx.Incomplete(ruleEKSCoredns, "no CoreDNS Deployment (k8s-app=kube-dns in kube-system) in the input")
		}
		return nil, nil
	}
	c := dnsContainer(d)
	if c == nil {
		return nil, nil
	}
	_, tag, _ := check.ImageParts(c.Image)
	v, ok := check.ParseKubeVersion(tag)
	if !ok {
		ctx.Incomplete(ruleEKSCoredns, "the CoreDNS image %s carries no version tag", c.Image)
		return nil, nil
	}
	row, exact := eksCorednsRowFor(rows, server)
	if row == nil {
		ctx.Incomplete(ruleEKSCoredns, "the EKS CoreDNS table starts at %s; the control plane runs %s", rows[0].Kubernetes, server.MinorString())
		return nil, nil
	}
	if !v.Less(row.coredns) {
		if !exact {
			ctx.Unknowable(ruleEKSCoredns, "the EKS CoreDNS table has no row for %s; CoreDNS %s is at or above the newest row (%s for %s), "+
				"a lower bound only", server.MinorString(), v, row.CoreDNS, row.Kubernetes)
		}
		return nil, nil
	}
	return []finding.Finding{eksCorednsFinding(d.Namespace, d.Name, c.Name, c.Image, v, server, serverEv, row, exact)}, nil
}

// isEKS reports whether the input shows an EKS cluster, and whether it
// could tell: the API server's -eks- build says so, else the nodes do when
// they were read whole.
func isEKS(ctx *check.Context) (eks, known bool) {
	s := ctx.Snapshot
	if strings.Contains(s.Source.ServerVersion, "-eks-") {
		return true, true
	}
	for i := range s.Nodes {
		if check.ManagedProvider(&s.Nodes[i]) == "EKS" {
			return true, true
		}
	}
	return false, s.Source.ServerVersion != "" || ctx.Complete(snapshot.Nodes) && len(s.Nodes) > 0
}

// eksCorednsRowFor is the row for the server's minor, else the newest row
// when the server is newer than every row (exact false), else nil.
func eksCorednsRowFor(rows []*eksCorednsRow, server check.KubeVersion) (*eksCorednsRow, bool) {
	var newest *eksCorednsRow
	for _, r := range rows {
		if r.kube.Major == server.Major && r.kube.Minor == server.Minor {
			return r, true
		}
		if newest == nil || newest.kube.Less(r.kube) {
			newest = r
		}
	}
	if newest.kube.Less(server) {
		return newest, false
	}
	return nil, false
}

func eksCorednsFinding(ns, name, container, image string, v, server check.KubeVersion, serverEv string, row *eksCorednsRow, exact bool) finding.Finding {
	sev, gap := finding.Low, "a patch release"
	if v.Major < row.coredns.Major || v.Major == row.coredns.Major && v.Minor < row.coredns.Minor {
		sev, gap = finding.Medium, "a minor line"
	}
	listed := fmt.Sprintf("lists CoreDNS %s for Kubernetes %s", row.CoreDNS, row.Kubernetes)
	if !exact {
		listed = fmt.Sprintf("has no row for %s yet; its newest row %s, a lower bound", server.MinorString(), listed)
	}
	msg := fmt.Sprintf("The cluster DNS Deployment %s/%s runs CoreDNS %s on an EKS control plane at %s, %s behind: the EKS user guide %s. "+
		"EKS does not upgrade CoreDNS with the control plane; a CoreDNS left behind after an upgrade (or rolled back) runs a build "+
		"AWS does not list for this Kubernetes version.", ns, name, v, server, gap, listed)
	if repo, _, _ := check.ImageParts(image); !strings.Contains(repo, "/eks/coredns") {
		msg += " The image is not from AWS's eks/coredns repository: AWS's builds and Corefile can differ from upstream's."
	}
	ref := finding.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
	f := finding.Finding{
		Check:    eksCorednsID,
		Severity: sev,
		Title:    fmt.Sprintf("EKS CoreDNS %s is older than the %s AWS lists for Kubernetes %s", v, row.CoreDNS, row.Kubernetes),
		Message:  msg,
		Objects:  []finding.ObjectRef{ref},
		Evidence: []string{
			serverEv,
			fmt.Sprintf("EKS CoreDNS table: Kubernetes %s -> %s (%s)", row.Kubernetes, row.CoreDNS, strings.Join(row.Sources, ", ")),
		},
		Remediation: "Update CoreDNS to the version the EKS user guide lists for this Kubernetes version (as the EKS add-on, " +
			"aws eks update-addon, or following AWS's self-managed update steps, which include EKS-specific Corefile changes), " +
			"and read AWS's notes for the add-on, not only CoreDNS's upstream release notes.",
		Cases: []string{caseDFDSCoreDNS},
	}
	f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("Deployment", "", container, "image"), image)))
	return f
}
