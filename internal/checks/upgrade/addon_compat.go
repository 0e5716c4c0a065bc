package upgrade

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

const ruleAddonCompat = "addon-compat"

const caseIngressNginxV0 = "ingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021"

// caseCSIDriver is the case the storage tables (Rook, Trident) cite: a CSI
// driver release that was not ready for a new Kubernetes minor.
const caseCSIDriver = "dell-csm-master-nodeselector-k8s124-2022"

//go:embed data/addon-compat.yaml
var addonCompatYAML []byte

// addonRelease is one row of an add-on's compatibility table: releases
// that the project lists with the same Kubernetes minors. Versions are
// exact tags; Lines are release lines ("v3.28") for projects that document
// the minors once per line rather than per patch release.
type addonRelease struct {
	Versions   []string `json:"versions"`
	Lines      []string `json:"lines"`
	Kubernetes []string `json:"kubernetes"`
	Sources    []string `json:"sources"`

	oldest, newest check.KubeVersion
}

// What a project's list of Kubernetes minors means, which sets how firmly a
// target outside it is reported.
const (
	// basisSupported: the project states the minors a release supports
	// (ingress-nginx; Rook's prerequisites, Trident's installer range): a
	// newer target is outside its support, high.
	basisSupported = "supported"
	// basisTested: the project lists the minors it tested a release on and
	// says others may work (Calico, Cilium): a newer target is untested,
	// medium.
	basisTested = "tested"
	// basisKubeadm: the list is the Kubernetes minors whose kubeadm deploys
	// that release (CoreDNS): a newer target ships a newer one, low.
	basisKubeadm = "kubeadm"
)

type addonTable struct {
	Name     string         `json:"name"`
	Images   []string       `json:"images"`
	Case     string         `json:"case"`
	Basis    string         `json:"basis"`
	Sources  []string       `json:"sources"`
	Releases []addonRelease `json:"releases"`

	// byVersion maps a release tag as the project writes it ("v1.12.1")
	// to its row.
	byVersion map[string]*addonRelease
	// byLine maps a release line ("v3.28") to its row.
	byLine map[string]*addonRelease
}

// release is the row for a tag: its exact entry, else the entry of its
// release line (the tag up to its last dot), else nil.
func (a *addonTable) release(tag string) *addonRelease {
	if r := a.byVersion[tag]; r != nil {
		return r
	}
	if i := strings.LastIndex(tag, "."); i > 0 {
		return a.byLine[tag[:i]]
	}
	return nil
}

type addonFacts struct {
	Sources []string     `json:"sources"`
	Addons  []addonTable `json:"addons"`

	// byImage maps a lower-case image repository to its add-on.
	byImage map[string]*addonTable
}

var loadAddonFacts = sync.OnceValues(func() (*addonFacts, error) { return parseAddonFacts(addonCompatYAML) })

func parseAddonFacts(data []byte) (*addonFacts, error) {
	var f addonFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("addon-compat.yaml: %w", err)
	}
	f.byImage = map[string]*addonTable{}
	for i := range f.Addons {
		a := &f.Addons[i]
		if a.Name == "" || len(a.Images) == 0 || a.Case == "" {
			return nil, fmt.Errorf("addon-compat.yaml: add-on %q: name, images and case are required", a.Name)
		}
		switch a.Basis {
		case "":
			a.Basis = basisSupported
		case basisSupported, basisTested, basisKubeadm:
		default:
			return nil, fmt.Errorf("addon-compat.yaml: add-on %q: basis %q is not supported, tested or kubeadm", a.Name, a.Basis)
		}
		if err := sourced("addon-compat.yaml", a.Name, a.Sources); err != nil {
			return nil, err
		}
		for _, im := range a.Images {
			f.byImage[strings.ToLower(im)] = a
		}
		a.byVersion = map[string]*addonRelease{}
		a.byLine = map[string]*addonRelease{}
		for j := range a.Releases {
			r := &a.Releases[j]
			what := fmt.Sprintf("%s %v%v", a.Name, r.Versions, r.Lines)
			if len(r.Versions)+len(r.Lines) == 0 || len(r.Kubernetes) == 0 {
				return nil, fmt.Errorf("addon-compat.yaml: %s: versions or lines, and kubernetes, are required", what)
			}
			if err := sourced("addon-compat.yaml", what, r.Sources); err != nil {
				return nil, err
			}
			for _, k := range r.Kubernetes {
				v, ok := check.ParseKubeVersion(k)
				if !ok {
					return nil, fmt.Errorf("addon-compat.yaml: %s: %q is not a Kubernetes minor", what, k)
				}
				if r.newest.Less(v) {
					r.newest = v
				}
				if r.oldest.Major == 0 || v.Less(r.oldest) {
					r.oldest = v
				}
			}
			for _, v := range r.Versions {
				if _, dup := a.byVersion[v]; dup {
					return nil, fmt.Errorf("addon-compat.yaml: %s %s is listed twice", a.Name, v)
				}
				a.byVersion[v] = r
			}
			for _, l := range r.Lines {
				if _, dup := a.byLine[l]; dup || strings.Count(l, ".") != 1 {
					return nil, fmt.Errorf("addon-compat.yaml: %s line %q is listed twice or is not a major.minor line", a.Name, l)
				}
				a.byLine[l] = r
			}
		}
	}
	return &f, nil
}

// compatAt says which minor the add-on tables are read against: the
// preflight's target (a release whose newest listed minor is older is a
// finding) or the minor the cluster runs now (any release that does not
// list it is).
type compatAt struct {
	now   bool
	check string // the check the findings belong to
	rule  string
}

var (
	atTarget = compatAt{check: "upgrade-preflight", rule: ruleAddonCompat}
	atNow    = compatAt{now: true, check: addonVersionID, rule: ruleAddonVersion}
)

// outside reports whether release r does not list minor v: for a target,
// only newer than its newest counts (an older target is not an upgrade).
func (at compatAt) outside(r *addonRelease, v check.KubeVersion) bool {
	if at.now && v.Less(r.oldest) {
		return true
	}
	return r.newest.Less(v)
}

// addonCompat judges the add-ons identified by their images in DaemonSets
// and Deployments against their projects' compatibility tables at minor t
// (see compatAt), as firmly as the table's basis allows (see
// addonFinding). A release the table does not list leaves the rule
// partial: unknown, never a pass.
func addonCompat(ctx *check.Context, t check.KubeVersion, at compatAt) []finding.Finding {
	f, err := loadAddonFacts()
	if err != nil {
		ctx.Incomplete(at.rule, "%v", err)
		return nil
	}
	s := ctx.Snapshot
	target := check.KubeVersion{Major: t.Major, Minor: t.Minor}
	var out []finding.Finding
	unknown := map[string]bool{}
	judge := func(ref finding.ObjectRef, containers []corev1.Container) {
		for _, c := range containers {
			repo, tag, _ := check.ImageParts(c.Image)
			a := f.byImage[strings.ToLower(repo)]
			if a == nil {
				continue
			}
			r := a.release(tag)
			if r == nil {
				what := a.Name + " " + tag
				if tag == "" {
					what = a.Name + " (image pinned by digest only)"
				}
				unknown[what] = true
				continue
			}
			if !at.outside(r, target) {
				continue
			}
			fd := addonFinding(a, r, tag, target, ref, at)
			fd.Evidence = append([]string{fmt.Sprintf("%s %s: Kubernetes %s (%s)", a.Name, tag, strings.Join(r.Kubernetes, ", "), basisWords[a.Basis])},
				r.Sources...)
			fd.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField(ref.Kind, "", c.Name, "image"), c.Image)))
			out = append(out, fd)
		}
	}
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		judge(check.Ref("apps/v1", "DaemonSet", ds), ds.Spec.Template.Spec.Containers)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		judge(check.Ref("apps/v1", "Deployment", d), d.Spec.Template.Spec.Containers)
	}
	if len(unknown) > 0 {
		ctx.Unknowable(at.rule, "not in kubegap's compatibility table: %s", strings.Join(slices.Sorted(maps.Keys(unknown)), ", "))
	}
	return out
}

// basisWords says in the evidence what the listed minors are.
var basisWords = map[string]string{
	basisSupported: "the minors the project supports for that release",
	basisTested:    "the minors the project tested that release on",
	basisKubeadm:   "the minors whose kubeadm deploys that release",
}

// addonFinding words the finding by the table's basis. A stated support
// range is high and "fix before". A tested-on list is medium and "fix
// before": the project does not say the release fails at the target, but
// recommends a release tested on it, and a CNI that misbehaves takes pod
// networking down with it. kubeadm's CoreDNS pairing is low and "watch
// during": kubeadm replaces CoreDNS itself on upgrade, and the pairing is
// what kubeadm deploys, not a statement that other releases fail. Read
// against the running minor (at.now) the same severities hold, without the
// preflight's before/during.
func addonFinding(a *addonTable, r *addonRelease, tag string, v check.KubeVersion, ref finding.ObjectRef, at compatAt) finding.Finding {
	listed := r.Kubernetes[0] + " to " + r.Kubernetes[len(r.Kubernetes)-1]
	tm := v.MinorString()
	fd := finding.Finding{Check: at.check, Objects: []finding.ObjectRef{ref}, Cases: []string{a.Case}}
	// which names the minor: the target, or the one the cluster runs.
	which, then := tm, " and the minor the cluster runs now, then upgrade the cluster"
	if at.now {
		which, then = tm+", which the cluster runs", ""
	}
	switch a.Basis {
	case basisTested:
		fd.Severity, fd.Preflight = finding.Medium, finding.PreflightBefore
		fd.Title = fmt.Sprintf("%s %s is not tested on Kubernetes %s", a.Name, tag, which)
		fd.Message = fmt.Sprintf("%s runs %s %s. The project lists the Kubernetes minors it tested that release on "+
			"(tested: %s); %s is not among them. The project does not say the release fails there, but recommends "+
			"running a release tested on the minor in use.", ref, a.Name, tag, listed, tm)
		fd.Remediation = fmt.Sprintf("Move %s to a release whose tested Kubernetes minors include %s%s; or accept "+
			"the untested pairing and watch the add-on closely.", a.Name, tm, then)
	case basisKubeadm:
		fd.Severity, fd.Preflight = finding.Low, finding.PreflightDuring
		fd.Title = fmt.Sprintf("%s %s is not the release kubeadm deploys with Kubernetes %s", a.Name, tag, which)
		fd.Message = fmt.Sprintf("%s runs %s %s, the release kubeadm deploys with Kubernetes %s, not with %s. "+
			"This is a pairing, not a support statement: kubeadm upgrades replace it themselves, other "+
			"installers may not.", ref, a.Name, tag, listed, tm)
		fd.Remediation = fmt.Sprintf("If kubeadm does not manage %s, move it to the release kubeadm %s deploys, "+
			"and watch DNS resolution while it changes.", a.Name, tm)
	default:
		fd.Severity, fd.Preflight = finding.High, finding.PreflightBefore
		bound := fmt.Sprintf("up to %s", r.newest.MinorString())
		if v.Less(r.oldest) {
			bound = fmt.Sprintf("from %s", r.oldest.MinorString())
		}
		fd.Title = fmt.Sprintf("%s %s supports Kubernetes %s, not %s", a.Name, tag, bound, which)
		fd.Message = fmt.Sprintf("%s runs %s %s. The project's compatibility table lists Kubernetes %s for that release, "+
			"so %s is outside what it supports and tests.", ref, a.Name, tag, listed, tm)
		fd.Remediation = fmt.Sprintf("Move %s to a release whose supported Kubernetes versions include %s%s.",
			a.Name, tm, then)
	}
	if at.now {
		fd.Preflight = ""
	}
	return fd
}
