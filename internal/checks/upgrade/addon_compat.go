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

//go:embed data/addon-compat.yaml
var addonCompatYAML []byte

// addonRelease is one row of an add-on's compatibility table: releases
// that the project lists with the same Kubernetes minors.
type addonRelease struct {
	Versions   []string `json:"versions"`
	Kubernetes []string `json:"kubernetes"`
	Sources    []string `json:"sources"`

	newest check.KubeVersion
}

type addonTable struct {
	Name     string         `json:"name"`
	Images   []string       `json:"images"`
	Case     string         `json:"case"`
	Sources  []string       `json:"sources"`
	Releases []addonRelease `json:"releases"`

	// byVersion maps a release tag as the project writes it ("v1.12.1")
	// to its row.
	byVersion map[string]*addonRelease
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
	sourced := func(what string, sources []string) error {
		if len(sources) == 0 {
			return fmt.Errorf("addon-compat.yaml: %s has no source", what)
		}
		for _, s := range sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("addon-compat.yaml: %s: source %q is not an https URL", what, s)
			}
		}
		return nil
	}
	f.byImage = map[string]*addonTable{}
	for i := range f.Addons {
		a := &f.Addons[i]
		if a.Name == "" || len(a.Images) == 0 || a.Case == "" {
			return nil, fmt.Errorf("addon-compat.yaml: add-on %q: name, images and case are required", a.Name)
		}
		if err := sourced(a.Name, a.Sources); err != nil {
			return nil, err
		}
		for _, im := range a.Images {
			f.byImage[strings.ToLower(im)] = a
		}
		a.byVersion = map[string]*addonRelease{}
		for j := range a.Releases {
			r := &a.Releases[j]
			what := fmt.Sprintf("%s %v", a.Name, r.Versions)
			if len(r.Versions) == 0 || len(r.Kubernetes) == 0 {
				return nil, fmt.Errorf("addon-compat.yaml: %s: versions and kubernetes are required", what)
			}
			if err := sourced(what, r.Sources); err != nil {
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
			}
			for _, v := range r.Versions {
				if _, dup := a.byVersion[v]; dup {
					return nil, fmt.Errorf("addon-compat.yaml: %s %s is listed twice", a.Name, v)
				}
				a.byVersion[v] = r
			}
		}
	}
	return &f, nil
}

// addonCompat judges the add-ons identified by their images in DaemonSets
// and Deployments against their projects' compatibility tables: an add-on
// release whose newest supported minor is older than the target is a
// high "fix before" finding. A release the table does not list leaves the
// rule partial: unknown, never a pass.
func addonCompat(ctx *check.Context, t check.KubeVersion) []finding.Finding {
	f, err := loadAddonFacts()
	if err != nil {
		ctx.Incomplete(ruleAddonCompat, "%v", err)
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
			r := a.byVersion[tag]
			if r == nil {
				what := a.Name + " " + tag
				if tag == "" {
					what = a.Name + " (image pinned by digest only)"
				}
				unknown[what] = true
				continue
			}
			if !r.newest.Less(target) {
				continue
			}
			supported := r.Kubernetes[0] + " to " + r.Kubernetes[len(r.Kubernetes)-1]
			out = append(out, finding.Finding{
				Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
				Title: fmt.Sprintf("%s %s supports Kubernetes up to %s, not %s", a.Name, tag, r.newest.MinorString(), target.MinorString()),
				Message: fmt.Sprintf("%s runs %s %s. The project's compatibility table lists Kubernetes %s for that release, "+
					"so %s is outside what it supports and tests; upgrade the add-on to a release that lists %s before "+
					"the control plane moves.", ref, a.Name, tag, supported, target.MinorString(), target.MinorString()),
				Objects: []finding.ObjectRef{ref},
				Evidence: append([]string{fmt.Sprintf("%s container %s image %s", ref, c.Name, c.Image),
					fmt.Sprintf("%s %s: Kubernetes %s", a.Name, tag, strings.Join(r.Kubernetes, ", "))}, r.Sources...),
				Remediation: fmt.Sprintf("Upgrade %s to a release whose supported Kubernetes versions include %s, within the "+
					"minors the current cluster also supports, then upgrade the cluster.", a.Name, target.MinorString()),
				Cases: []string{a.Case},
			})
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
		ctx.Incomplete(ruleAddonCompat, "not in kubegap's compatibility table: %s", strings.Join(slices.Sorted(maps.Keys(unknown)), ", "))
	}
	return out
}
