// Package upgrade holds the checks about Kubernetes versions moving on: API
// versions the server stopped serving, and the upgrade preflight that
// --target-version runs (skew at the target, provider add-on changes,
// kubelet requirements of the new version, drain blockers). Their facts are
// in data/upgrade-facts.yaml, every row with its sources.
package upgrade

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
)

//go:embed data/upgrade-facts.yaml
var factsYAML []byte

type removedAPI struct {
	GroupVersion string   `json:"groupVersion"`
	Kinds        []string `json:"kinds"`
	RemovedIn    string   `json:"removedIn"`
	Replacement  string   `json:"replacement"`
	Sources      []string `json:"sources"`

	removedIn check.KubeVersion
}

type cgroupDefault struct {
	Distro  string   `json:"distro"`
	Version string   `json:"version"`
	Sources []string `json:"sources"`
}

type providerChange struct {
	Provider       string   `json:"provider"`
	Minor          string   `json:"minor"`
	DaemonSet      string   `json:"daemonSet"`
	Container      string   `json:"container"`
	FromRepository string   `json:"fromRepository"`
	Image          string   `json:"image"`
	Installs       string   `json:"installs"`
	NeedsGlibc     string   `json:"needsGlibc"`
	Case           string   `json:"case"`
	Sources        []string `json:"sources"`

	minor check.KubeVersion
}

type facts struct {
	Sources              []string     `json:"sources"`
	RemovedAPIs          []removedAPI `json:"removedAPIs"`
	JudgesTargetsThrough struct {
		Minor   string   `json:"minor"`
		Sources []string `json:"sources"`
	} `json:"judgesTargetsThrough"`
	KubeletRefusesCgroupV1From struct {
		Minor   string   `json:"minor"`
		Sources []string `json:"sources"`
	} `json:"kubeletRefusesCgroupV1From"`
	CgroupV2DefaultFrom []cgroupDefault  `json:"cgroupV2DefaultFrom"`
	ProviderChanges     []providerChange `json:"providerChanges"`
	// What the target's kubelet needs of the node (node_requirements.go).
	RuntimeAtTarget runtimeAtTargetFacts `json:"runtimeAtTarget"`
	NodeOSAtTarget  []nodeOSRow          `json:"nodeOSAtTarget"`
	// What a k3s release changes beside Kubernetes (k3s_changes.go).
	K3s k3sFacts `json:"k3s"`
	// CoreDNS's EndpointSlice choice at start (coredns_endpointslice.go).
	CoreDNSEndpointSliceAtStart corednsSliceFacts `json:"corednsEndpointSliceAtStart"`

	cgroupV1Refused check.KubeVersion
	// judgesThrough is JudgesTargetsThrough.Minor.
	judgesThrough check.KubeVersion
	// removed maps "group/version/Kind" to its row.
	removed map[string]*removedAPI
}

var loadFacts = sync.OnceValues(func() (*facts, error) { return parseFacts(factsYAML) })

func parseFacts(data []byte) (*facts, error) {
	var f facts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("upgrade-facts.yaml: %w", err)
	}
	f.removed = map[string]*removedAPI{}
	for i := range f.RemovedAPIs {
		r := &f.RemovedAPIs[i]
		v, ok := check.ParseKubeVersion(r.RemovedIn)
		if !ok || r.GroupVersion == "" || len(r.Kinds) == 0 || r.Replacement == "" {
			return nil, fmt.Errorf("upgrade-facts.yaml: removed API %q: groupVersion, kinds, removedIn and replacement are required", r.GroupVersion)
		}
		if err := sourced("upgrade-facts.yaml", r.GroupVersion, r.Sources); err != nil {
			return nil, err
		}
		r.removedIn = v
		for _, k := range r.Kinds {
			f.removed[r.GroupVersion+"/"+k] = r
		}
	}
	through, ok := check.ParseKubeVersion(f.JudgesTargetsThrough.Minor)
	if !ok {
		return nil, errors.New("upgrade-facts.yaml: judgesTargetsThrough.minor is required")
	}
	if err := sourced("upgrade-facts.yaml", "judgesTargetsThrough", f.JudgesTargetsThrough.Sources); err != nil {
		return nil, err
	}
	f.judgesThrough = through
	v, ok := check.ParseKubeVersion(f.KubeletRefusesCgroupV1From.Minor)
	if !ok {
		return nil, errors.New("upgrade-facts.yaml: kubeletRefusesCgroupV1From.minor is required")
	}
	if err := sourced("upgrade-facts.yaml", "kubeletRefusesCgroupV1From", f.KubeletRefusesCgroupV1From.Sources); err != nil {
		return nil, err
	}
	f.cgroupV1Refused = v
	for _, c := range f.CgroupV2DefaultFrom {
		if err := sourced("upgrade-facts.yaml", "cgroup v2 default of "+c.Distro, c.Sources); err != nil {
			return nil, err
		}
	}
	for i := range f.ProviderChanges {
		pc := &f.ProviderChanges[i]
		v, ok := check.ParseKubeVersion(pc.Minor)
		if !ok || pc.DaemonSet == "" || pc.Container == "" || pc.Image == "" || pc.Case == "" || pc.FromRepository == "" {
			return nil, fmt.Errorf("upgrade-facts.yaml: provider change %q: minor, daemonSet, container, fromRepository, image and case are required", pc.Image)
		}
		if err := sourced("upgrade-facts.yaml", pc.Image, pc.Sources); err != nil {
			return nil, err
		}
		pc.minor = v
	}
	if err := parseNodeRequirements(&f); err != nil {
		return nil, err
	}
	if err := parseCoreDNSSliceFacts(&f); err != nil {
		return nil, err
	}
	if err := parseK3sFacts(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// removedAs returns the row for an object of kind written in apiVersion,
// or nil when that version was never removed.
func (f *facts) removedAs(apiVersion, kind string) *removedAPI {
	return f.removed[apiVersion+"/"+kind]
}

// sourced checks that a row of a data file names its sources, each an
// https URL.
func sourced(file, what string, sources []string) error {
	if len(sources) == 0 {
		return fmt.Errorf("%s: %s has no source", file, what)
	}
	for _, s := range sources {
		if !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("%s: %s: source %q is not an https URL", file, what, s)
		}
	}
	return nil
}
