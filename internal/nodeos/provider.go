package nodeos

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Provider is a managed Kubernetes service whose node images have support
// windows of their own.
type Provider string

// Providers ProviderOf recognises.
const (
	ProviderUnknown Provider = ""
	ProviderAKS     Provider = "aks"
	ProviderEKS     Provider = "eks"
	ProviderGKE     Provider = "gke"
)

// providerSigns says how a node shows which managed service runs it: the
// cloud's spec.providerID scheme, and a label only that service's node
// images set. The scheme alone is not enough, because self-managed clusters
// on the same cloud report the same providerID and do not follow the
// service's image retirements.
var providerSigns = []struct {
	provider    Provider
	idPrefix    string
	labelPrefix []string
}{
	// AKS nodes: azure:///subscriptions/... and kubernetes.azure.com/*
	// labels such as kubernetes.azure.com/cluster and node-image-version.
	{ProviderAKS, "azure://", []string{"kubernetes.azure.com/"}},
	// EKS managed node groups: aws:///zone/i-... and
	// eks.amazonaws.com/nodegroup. Karpenter and self-managed nodes carry no
	// EKS label and stay unknown rather than guessed.
	{ProviderEKS, "aws://", []string{"eks.amazonaws.com/"}},
	// GKE: gce://project/zone/name and cloud.google.com/gke-nodepool.
	{ProviderGKE, "gce://", []string{"cloud.google.com/gke-"}},
}

// ProviderOf tells which managed Kubernetes service runs a node from its
// spec.providerID and labels, or ProviderUnknown when the node does not
// show it (self-managed, another cloud, no providerID).
func ProviderOf(providerID string, labels map[string]string) Provider {
	for _, sign := range providerSigns {
		if !strings.HasPrefix(providerID, sign.idPrefix) {
			continue
		}
		for key := range labels {
			for _, prefix := range sign.labelPrefix {
				if strings.HasPrefix(key, prefix) {
					return sign.provider
				}
			}
		}
	}
	return ProviderUnknown
}

// Window is how long a managed service supports its node images of one OS
// release.
type Window struct {
	Provider Provider
	Distro   string
	// Version is empty when the window covers every version of Distro.
	Version string
	// EndOfSupport is the day the service stops producing node images and
	// security patches for the release.
	EndOfSupport time.Time
	// ImagesRemoved is the day the service deletes the node images, after
	// which scaling and reimaging fail; zero when not announced.
	ImagesRemoved time.Time
	Sources       []string
	Note          string
}

// ProviderWindow returns the support window of distro and version (as
// Identify reports them in Info.Distro and Info.Version) on the managed
// service p, and false when none is tabled, which means unknown, not
// unlimited.
func ProviderWindow(p Provider, distro, version string) (Window, bool) {
	ws, err := windows()
	if err != nil || p == ProviderUnknown {
		return Window{}, false
	}
	for _, w := range ws {
		if w.Provider == p && w.Distro == distro && (w.Version == "" || w.Version == version) {
			w.Sources = slices.Clone(w.Sources)
			return w, true
		}
	}
	return Window{}, false
}

// ProviderWindows returns every tabled window, for tests and documentation.
func ProviderWindows() ([]Window, error) {
	ws, err := windows()
	if err != nil {
		return nil, err
	}
	out := make([]Window, len(ws))
	for i, w := range ws {
		out[i] = w
		out[i].Sources = slices.Clone(w.Sources)
	}
	return out, nil
}

//go:embed provider-windows.yaml
var providerWindowsYAML []byte

var windows = sync.OnceValues(func() ([]Window, error) { return parseWindows(providerWindowsYAML) })

type windowEntry struct {
	Provider      Provider `json:"provider"`
	Distro        string   `json:"distro"`
	Version       string   `json:"version,omitempty"`
	EndOfSupport  string   `json:"endOfSupport"`
	ImagesRemoved string   `json:"imagesRemoved,omitempty"`
	Evidence      string   `json:"evidence"`
	Checked       string   `json:"checked"`
	Sources       []string `json:"sources"`
	Note          string   `json:"note,omitempty"`
}

func parseWindows(data []byte) ([]Window, error) {
	var file struct {
		Windows []windowEntry `json:"windows"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("parsing provider-windows.yaml: %w", err)
	}
	if len(file.Windows) == 0 {
		return nil, fmt.Errorf("provider-windows.yaml: no windows")
	}
	type key struct {
		p               Provider
		distro, version string
	}
	seen := map[key]bool{}
	out := make([]Window, 0, len(file.Windows))
	for i, e := range file.Windows {
		w, err := compileWindow(e)
		if err != nil {
			return nil, fmt.Errorf("provider-windows.yaml window %d (%s %s %s): %w", i+1, e.Provider, e.Distro, e.Version, err)
		}
		k := key{w.Provider, w.Distro, w.Version}
		if seen[k] {
			return nil, fmt.Errorf("provider-windows.yaml window %d: %s %s %s is listed twice", i+1, e.Provider, e.Distro, e.Version)
		}
		seen[k] = true
		out = append(out, w)
	}
	return out, nil
}

func compileWindow(e windowEntry) (Window, error) {
	switch e.Provider {
	case ProviderAKS, ProviderEKS, ProviderGKE:
	default:
		return Window{}, fmt.Errorf("provider %q: want aks, eks or gke", e.Provider)
	}
	if e.Distro == "" {
		return Window{}, fmt.Errorf("distro is required")
	}
	if err := checkProvenance(e.Evidence, e.Checked, e.Sources); err != nil {
		return Window{}, err
	}
	if e.EndOfSupport == "" {
		return Window{}, fmt.Errorf("endOfSupport is required")
	}
	end, err := parseDate(e.EndOfSupport)
	if err != nil {
		return Window{}, fmt.Errorf("endOfSupport: %w", err)
	}
	removed, err := parseDate(e.ImagesRemoved)
	if err != nil {
		return Window{}, fmt.Errorf("imagesRemoved: %w", err)
	}
	if !removed.IsZero() && removed.Before(end) {
		return Window{}, fmt.Errorf("images removed before support ends")
	}
	return Window{
		Provider: e.Provider, Distro: e.Distro, Version: e.Version,
		EndOfSupport: end, ImagesRemoved: removed,
		Sources: e.Sources, Note: e.Note,
	}, nil
}
