package upgrade

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks/dns"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const ruleEKSAddons = "eks-addons-at-target"

// caseDFDSCoreDNS is an EKS upgrade whose add-on step (AWS's CoreDNS
// build and instructions, not upstream's) broke cluster DNS.
const caseDFDSCoreDNS = "dfds-eks-114-coredns-vendor-upgrade-crashloop-2020"

//go:embed data/eks-addons.yaml
var eksAddonsYAML []byte

// eksAddonRow is one row of an add-on's table: the version the EKS user
// guide lists for a Kubernetes minor.
type eksAddonRow struct {
	Kubernetes string   `json:"kubernetes"`
	Version    string   `json:"version"`
	Sources    []string `json:"sources"`

	minor, version check.KubeVersion
}

type eksWorkload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Container string `json:"container"`
}

// eksAddon is one EKS add-on: where EKS installs it, the repository path
// of its image in EKS's ECR registries, and its table.
type eksAddon struct {
	Name     string      `json:"name"`
	Title    string      `json:"title"`
	Workload eksWorkload `json:"workload"`
	// Repository is the image's path below the registry host
	// ("eks/coredns"), as AWS publishes it in every Region.
	Repository string `json:"repository"`
	// OneMinorAtATime: the guide asks for updates one minor at a time.
	OneMinorAtATime bool `json:"oneMinorAtATime"`
	// FollowsControlPlane: the target's row is reachable only once the
	// control plane is at the target (kube-proxy, never newer than it).
	FollowsControlPlane bool `json:"followsControlPlane"`
	// RowsFrom names another area's table the rows are read from.
	RowsFrom          string         `json:"rowsFrom"`
	SelfManagedUpdate string         `json:"selfManagedUpdate"`
	Sources           []string       `json:"sources"`
	Rows              []*eksAddonRow `json:"rows"`
}

type eksAddonFacts struct {
	Sources     []string    `json:"sources"`
	Addons      []*eksAddon `json:"addons"`
	UpdateGuide struct {
		Sources []string `json:"sources"`
	} `json:"updateGuide"`
}

var loadEKSAddons = sync.OnceValues(func() (*eksAddonFacts, error) { return parseEKSAddons(eksAddonsYAML) })

func parseEKSAddons(data []byte) (*eksAddonFacts, error) {
	var f eksAddonFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("data/eks-addons.yaml: %w", err)
	}
	if len(f.Addons) == 0 || len(f.UpdateGuide.Sources) == 0 {
		return nil, fmt.Errorf("data/eks-addons.yaml: no add-ons or no update guide source")
	}
	for _, a := range f.Addons {
		if a.Name == "" || a.Repository == "" || a.Workload.Name == "" || a.Workload.Container == "" || !httpsSourced(a.Sources) {
			return nil, fmt.Errorf("data/eks-addons.yaml: add-on %q lacks a name, repository, workload or https source", a.Name)
		}
		switch {
		case a.RowsFrom == "eks-coredns-version" && len(a.Rows) == 0:
		case a.RowsFrom == "" && len(a.Rows) > 0:
		default:
			return nil, fmt.Errorf("data/eks-addons.yaml: add-on %s needs rows or rowsFrom: eks-coredns-version, not both", a.Name)
		}
		for _, r := range a.Rows {
			var ok1, ok2 bool
			r.minor, ok1 = check.ParseKubeVersion(r.Kubernetes)
			r.version, ok2 = check.ParseKubeVersion(r.Version)
			if !ok1 || !ok2 || !strings.Contains(r.Version, "eksbuild") || !httpsSourced(r.Sources) {
				return nil, fmt.Errorf("data/eks-addons.yaml: %s row %q -> %q: bad version or no https source", a.Name, r.Kubernetes, r.Version)
			}
		}
	}
	return &f, nil
}

func httpsSourced(srcs []string) bool {
	for _, s := range srcs {
		if !strings.HasPrefix(s, "https://") {
			return false
		}
	}
	return len(srcs) > 0
}

// eksRow is the row judged for a minor, whichever table it comes from.
type eksRow struct {
	kubernetes string
	version    check.KubeVersion
	// full is the add-on version with its build ("v1.20.1-eksbuild.3"),
	// empty where the table keeps only the upstream version (CoreDNS).
	full    string
	sources []string
	// exact is false for the newest row standing in, as a lower bound,
	// for a minor past the table.
	exact bool
}

// rowFor is the add-on's row for minor m; ok is false when m is older
// than every row.
func (a *eksAddon) rowFor(m check.KubeVersion) (eksRow, bool, error) {
	if a.RowsFrom != "" {
		r, ok, err := dns.TargetEKSCoreDNS(m)
		if err != nil || !ok {
			return eksRow{}, false, err
		}
		return eksRow{kubernetes: r.Kubernetes, version: r.Version, sources: r.Sources, exact: r.Exact}, true, nil
	}
	var newest *eksAddonRow
	for _, r := range a.Rows {
		if r.minor.Major == m.Major && r.minor.Minor == m.Minor {
			return eksRow{kubernetes: r.Kubernetes, version: r.version, full: r.Version, sources: r.Sources, exact: true}, true, nil
		}
		if newest == nil || newest.minor.Less(r.minor) {
			newest = r
		}
	}
	if newest != nil && newest.minor.Less(m) {
		return eksRow{kubernetes: newest.Kubernetes, version: newest.version, full: newest.Version, sources: newest.Sources}, true, nil
	}
	return eksRow{}, false, nil
}

// isECRImage reports whether an image comes from an Amazon ECR registry
// (<account>.dkr.ecr.<region>.amazonaws.com[.cn]), where EKS publishes its
// add-on images, one registry per Region.
func isECRImage(image string) bool {
	host := check.ImageRegistry(image)
	return strings.Contains(host, ".dkr.ecr.") && (strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn"))
}

// eksAddonsAt judges the EKS add-ons (VPC CNI, CoreDNS, kube-proxy)
// against the versions the EKS user guide lists for the target minor.
// The control plane's version cur decides when an update can be made:
// before the upgrade when the current minor's row lists the same version
// or a newer one, else after the control plane reaches the target.
func eksAddonsAt(ctx *check.Context, cur check.CurrentVersion, t check.KubeVersion) ([]finding.Finding, error) {
	eks, known := dns.IsEKS(ctx)
	if !eks {
		if !known {
			ctx.Incomplete(ruleEKSAddons, "neither the API server version nor the nodes in the input say whether this is an EKS cluster")
		}
		return nil, nil
	}
	f, err := loadEKSAddons()
	if err != nil {
		return nil, err
	}
	tm := check.KubeVersion{Major: t.Major, Minor: t.Minor}
	atTarget := cur.Exact && !cur.Lower.Less(tm)
	var out []finding.Finding
	for _, a := range f.Addons {
		if a.FollowsControlPlane && !atTarget {
			// Before the control plane gets there, kube-proxy cannot be at
			// the target's row; kube-proxy-skew-at-target judges it.
			continue
		}
		ref, image, found := eksAddonImage(ctx.Snapshot, a)
		if !found {
			if !ctx.CompleteIn(workloadResource(a.Workload.Kind), a.Workload.Namespace) {
				ctx.Incomplete(ruleEKSAddons, "%s %s/%s is not in the input", a.Workload.Kind, a.Workload.Namespace, a.Workload.Name)
			}
			continue // not installed (another CNI, another DNS)
		}
		repo, tag, _ := check.ImageParts(image)
		if !isECRImage(image) || !strings.HasSuffix(repo, "/"+a.Repository) {
			ctx.Unknowable(ruleEKSAddons, "%s runs %s, not AWS's %s build from an ECR registry: its version is not the one EKS tables", ref, image, a.Repository)
			continue
		}
		v, ok := check.ParseKubeVersion(tag)
		if !ok {
			ctx.Incomplete(ruleEKSAddons, "the %s image %s carries no version tag", a.Name, image)
			continue
		}
		row, ok, err := a.rowFor(tm)
		if err != nil {
			return nil, err
		}
		if !ok {
			ctx.Unknowable(ruleEKSAddons, "the EKS %s table starts after %s", a.Title, tm.MinorString())
			continue
		}
		if !v.Less(row.version) {
			if !row.exact {
				ctx.Unknowable(ruleEKSAddons, "the EKS %s table has no row for %s; %s %s is at or above its newest row (%s for %s), a lower bound only",
					a.Title, tm.MinorString(), a.Name, tag, row.version, row.kubernetes)
			}
			continue
		}
		when := finding.PreflightDuring
		if now, known := currentMinor(cur); !a.FollowsControlPlane && known && now.Less(tm) {
			if nowRow, ok, err := a.rowFor(now); err == nil && ok && nowRow.exact && !nowRow.version.Less(row.version) {
				when = finding.PreflightBefore
			}
		}
		out = append(out, eksAddonFinding(a, f, ref, image, tag, v, row, tm, cur, when))
	}
	return out, nil
}

// currentMinor is the control plane's minor when the input pins it: stated,
// or bounded to one minor from both sides (the newest kubelet below, the
// target above).
func currentMinor(cur check.CurrentVersion) (check.KubeVersion, bool) {
	lo := check.KubeVersion{Major: cur.Lower.Major, Minor: cur.Lower.Minor}
	up := check.KubeVersion{Major: cur.Upper.Major, Minor: cur.Upper.Minor}
	return lo, cur.Known() && (cur.Exact || up == lo)
}

func workloadResource(kind string) snapshot.Resource {
	if kind == "Deployment" {
		return snapshot.Deployments
	}
	return snapshot.DaemonSets
}

// eksAddonImage finds the add-on's container in the workload EKS
// installs it as.
func eksAddonImage(s *snapshot.Snapshot, a *eksAddon) (finding.ObjectRef, string, bool) {
	w := a.Workload
	var spec *corev1.PodSpec
	var ref finding.ObjectRef
	switch w.Kind {
	case "Deployment":
		for i := range s.Deployments {
			if d := &s.Deployments[i]; d.Namespace == w.Namespace && d.Name == w.Name {
				spec, ref = &d.Spec.Template.Spec, check.Ref("apps/v1", "Deployment", d)
			}
		}
	default:
		for i := range s.DaemonSets {
			if d := &s.DaemonSets[i]; d.Namespace == w.Namespace && d.Name == w.Name {
				spec, ref = &d.Spec.Template.Spec, check.Ref("apps/v1", "DaemonSet", d)
			}
		}
	}
	if spec == nil {
		return ref, "", false
	}
	for _, c := range spec.Containers {
		if c.Name == w.Container {
			return ref, c.Image, true
		}
	}
	return ref, "", false
}

func eksAddonFinding(a *eksAddon, f *eksAddonFacts, ref finding.ObjectRef, image, tag string, v check.KubeVersion, row eksRow,
	tm check.KubeVersion, cur check.CurrentVersion, when string) finding.Finding {
	sev, gap := finding.Low, "a patch release behind"
	if v.Major < row.version.Major || v.Major == row.version.Major && v.Minor < row.version.Minor {
		sev, gap = finding.Medium, "an older minor line"
	}
	listed := fmt.Sprintf("the EKS user guide lists %s %s for Kubernetes %s", a.Title, rowVersionText(row), row.kubernetes)
	if !row.exact {
		listed = fmt.Sprintf("the EKS user guide's %s table has no row for %s yet; its newest, %s, a lower bound (the guide has not listed an older version for a newer Kubernetes)",
			a.Title, tm.MinorString(), listed)
	}
	timing := fmt.Sprintf("Update it before the control plane: the guide lists that version for the current minor (%s) too.", cur.Text())
	if when == finding.PreflightDuring {
		timing = fmt.Sprintf("Update it once the control plane is at %s, as the EKS update guide's last step has the add-ons updated after the control plane.", tm.MinorString())
	}
	msg := fmt.Sprintf("%s runs %s %s (image %s), %s: %s. %s", ref, a.Title, tag, image, gap, listed, timing)
	if a.FollowsControlPlane {
		msg = fmt.Sprintf("The control plane is at %s and %s still runs kube-proxy %s (image %s), %s: %s. The EKS update guide updates kube-proxy after the control plane; a kube-proxy left behind runs a build AWS does not list for this version.",
			cur.Lower.MinorString(), ref, tag, image, gap, listed)
	}
	version := row.full
	if version == "" || !row.exact {
		version = "<version>"
	}
	cmd := fmt.Sprintf("aws eks update-addon --cluster-name <cluster-name> --addon-name %s --addon-version %s --resolve-conflicts PRESERVE", a.Name, version)
	list := fmt.Sprintf("aws eks describe-addon-versions --addon-name %s --kubernetes-version %s --query \"addons[].addonVersions[].addonVersion\" --output text", a.Name, tm.MinorString())
	fix := fmt.Sprintf("If %s is the Amazon EKS add-on type, update it with the AWS CLI: %s. <cluster-name> is a placeholder for the EKS cluster's name (the Kubernetes API does not show it)", a.Title, cmd)
	if version == "<version>" {
		fix += fmt.Sprintf(", and <version> one of the %s builds at or above %s that %s lists", a.Name, row.version, list)
	}
	fix += fmt.Sprintf(". If it is self-managed (aws eks describe-addon --cluster-name <cluster-name> --addon-name %s returns an error), follow %s.", a.Name, a.SelfManagedUpdate)
	if a.OneMinorAtATime && v.Major == row.version.Major && row.version.Minor-v.Minor > 1 {
		var steps []string
		for m := v.Minor + 1; m <= row.version.Minor; m++ {
			steps = append(steps, fmt.Sprintf("v%d.%d", v.Major, m))
		}
		stepMinor := tm
		if now, known := currentMinor(cur); known && now.Less(tm) {
			stepMinor = now
		}
		fix += fmt.Sprintf(" AWS recommends one minor version at a time: %s, each a build that aws eks describe-addon-versions --addon-name %s --kubernetes-version %s lists.",
			strings.Join(steps, " → "), a.Name, stepMinor.MinorString())
	}
	ev := []string{
		fmt.Sprintf("EKS %s table: Kubernetes %s -> %s (%s)", a.Title, row.kubernetes, rowVersionText(row), strings.Join(row.sources, ", ")),
		"EKS update guide, when add-ons are updated: " + strings.Join(f.UpdateGuide.Sources, ", "),
		"the -eksbuild.N build number is not compared: the tables move it every few weeks",
	}
	if !cur.Exact {
		ev = append(ev, "control plane inferred at "+cur.Text()+": "+cur.Basis)
	}
	fd := finding.Finding{
		Check: "upgrade-preflight", Severity: sev, Preflight: when,
		Title:       fmt.Sprintf("EKS %s %s is older than the %s the EKS user guide lists for Kubernetes %s", a.Title, tag, rowVersionText(row), row.kubernetes),
		Message:     msg,
		Objects:     []finding.ObjectRef{ref},
		Evidence:    ev,
		Remediation: fix,
	}
	if a.Name == "coredns" {
		fd.Cases = []string{caseDFDSCoreDNS}
	}
	fd.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField(ref.Kind, "", a.Workload.Container, "image"), image)))
	return fd
}

// rowVersionText is the row's version as its table gives it.
func rowVersionText(r eksRow) string {
	if r.full != "" {
		return r.full
	}
	return r.version.String()
}
