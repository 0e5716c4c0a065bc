// Package owner recognises the objects a managed provider owns and
// reconciles (AKS, EKS, GKE, k3s) from the sourced table in
// data/providers.yaml, and marks the findings about them: a finding whose
// objects are all the provider's says who owns it and what the user can do
// instead, because an edit in the cluster would be reverted or is not
// possible at all.
//
// The marking happens after the checks ran (audit.Run calls Mark), from the
// labels, kept annotations and names the snapshot holds, so every check
// benefits without code of its own.
package owner

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/providers.yaml
var providersYAML []byte

// Table is the shape of data/providers.yaml.
type Table struct {
	Providers []Provider `json:"providers"`
	Markers   []Marker   `json:"markers"`
}

// Provider is one managed provider and what to do about its objects.
type Provider struct {
	Name    string   `json:"name"`
	Advice  string   `json:"advice"`
	Sources []string `json:"sources"`
}

// Marker is one way to tell a provider's object: a label, an annotation,
// or a kind, namespace and name.
type Marker struct {
	Provider string `json:"provider"`
	// Cluster restricts the row to clusters whose nodes
	// check.ManagedProvider names so; empty for a marker that is proof on
	// its own.
	Cluster    string `json:"cluster,omitempty"`
	Label      string `json:"label,omitempty"`
	Annotation string `json:"annotation,omitempty"`
	// Value is the label's or annotation's value; empty for any value.
	Value string `json:"value,omitempty"`
	// OwnerNames, with an objectset owner annotation, are the k3s Addons
	// (objectset.rio.cattle.io/owner-name) that are packaged components.
	OwnerNames []string `json:"ownerNames,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Namespace  string   `json:"namespace,omitempty"`
	Name       string   `json:"name,omitempty"`
	// Advice, when set, replaces the provider's for the objects this row
	// matches (the add-on to update, or that nothing in the cluster runs
	// it).
	Advice  string   `json:"advice,omitempty"`
	Sources []string `json:"sources"`
}

// OwnerNameAnnotation is the annotation wrangler's objectset sets beside
// objectset.rio.cattle.io/owner-gvk: the name of the owning object.
const OwnerNameAnnotation = "objectset.rio.cattle.io/owner-name"

// KeptAnnotations are the annotations a marker reads; the snapshot keeps
// them through trimming (internal/snapshot keptAnnotations lists them).
var KeptAnnotations = []string{"objectset.rio.cattle.io/owner-gvk", OwnerNameAnnotation}

var loadTable = check.Facts[Table]("internal/owner/data/providers.yaml", providersYAML, prepare)

func prepare(t *Table) error {
	known := map[string]bool{}
	for _, p := range t.Providers {
		if p.Name == "" || p.Advice == "" || len(p.Sources) == 0 {
			return fmt.Errorf("internal/owner/data/providers.yaml: provider %q needs a name, advice and sources", p.Name)
		}
		known[p.Name] = true
	}
	for i, m := range t.Markers {
		kinds := 0
		for _, set := range []bool{m.Label != "", m.Annotation != "", m.Name != ""} {
			if set {
				kinds++
			}
		}
		switch {
		case !known[m.Provider]:
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d names unknown provider %q", i, m.Provider)
		case m.Cluster != "" && !known[m.Cluster]:
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d restricts to unknown cluster %q", i, m.Cluster)
		case kinds != 1:
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d needs exactly one of label, annotation or name", i)
		case m.Name != "" && m.Kind == "":
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d names %q without a kind", i, m.Name)
		case m.Annotation != "" && !slices.Contains(KeptAnnotations, m.Annotation):
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d reads annotation %s, which the snapshot does not keep", i, m.Annotation)
		case len(m.Sources) == 0:
			return fmt.Errorf("internal/owner/data/providers.yaml: marker %d has no source", i)
		}
		for _, s := range m.Sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("internal/owner/data/providers.yaml: marker %d source %q is not an https URL", i, s)
			}
		}
	}
	return nil
}

// Load parses the table once; an error means the embedded file is broken.
func Load() (*Table, error) { return loadTable() }

// clusterProvider is the managed service every node of s points at, or ""
// when the nodes disagree or none is known.
func clusterProvider(s *snapshot.Snapshot) string {
	p := ""
	for i := range s.Nodes {
		np := check.ManagedProvider(&s.Nodes[i])
		if np == "" || (p != "" && np != p) {
			return ""
		}
		p = np
	}
	return p
}

// object is what a marker is matched against.
type object struct {
	ref  finding.ObjectRef
	meta snapshot.Meta
}

// match returns the first marker that says o is a provider's, and the
// marker in words.
func (t *Table) match(o object, cluster string) (*Marker, string, bool) {
	for i := range t.Markers {
		m := &t.Markers[i]
		if m.Cluster != "" && m.Cluster != cluster {
			continue
		}
		switch {
		case m.Label != "":
			if v, ok := o.meta.Labels[m.Label]; ok && (m.Value == "" || v == m.Value) {
				return m, fmt.Sprintf("label %s=%s on %s", m.Label, v, o.ref), true
			}
		case m.Annotation != "":
			v, ok := o.meta.Annotations[m.Annotation]
			if !ok || (m.Value != "" && v != m.Value) {
				continue
			}
			owner := o.meta.Annotations[OwnerNameAnnotation]
			if len(m.OwnerNames) > 0 && !slices.Contains(m.OwnerNames, owner) {
				continue
			}
			return m, fmt.Sprintf("annotations %s=%q, %s=%s on %s", m.Annotation, v, OwnerNameAnnotation, owner, o.ref), true
		case m.Name != "":
			if o.ref.Kind == m.Kind && o.ref.Name == m.Name && o.ref.Namespace == m.Namespace {
				return m, fmt.Sprintf("%s by name, on %s nodes", o.ref, cluster), true
			}
		}
	}
	return nil, "", false
}

// Mark sets Owner on each finding whose objects, Nodes aside, all belong
// to one provider. A Node named beside a workload is where it runs, not
// what the finding asks to change; a finding about Nodes alone is left
// unmarked. Objects are judged with their controlling workload: a Pod or
// ReplicaSet is its Deployment's, DaemonSet's or StatefulSet's.
func Mark(s *snapshot.Snapshot, fs []finding.Finding) error {
	t, err := loadTable()
	if err != nil {
		return err
	}
	cluster := clusterProvider(s)
	for i := range fs {
		if o := t.ownerOf(s, fs[i].Objects, cluster); o != nil {
			fs[i].Owner = o
		}
	}
	return nil
}

func (t *Table) ownerOf(s *snapshot.Snapshot, refs []finding.ObjectRef, cluster string) *finding.Owner {
	var provider *Marker
	var markers []string
	var sources []string
	judged := 0
	for _, ref := range refs {
		if ref.Kind == "Node" {
			continue
		}
		judged++
		m, why, ok := t.matchWithWorkload(s, ref, cluster)
		if !ok || (provider != nil && m.Provider != provider.Provider) {
			return nil
		}
		if provider == nil {
			provider = m
		}
		markers = append(markers, why)
		for _, src := range m.Sources {
			if !slices.Contains(sources, src) {
				sources = append(sources, src)
			}
		}
	}
	if judged == 0 || provider == nil {
		return nil
	}
	p := t.provider(provider.Provider)
	advice := p.Advice
	if provider.Advice != "" {
		advice = provider.Advice
	}
	return &finding.Owner{Provider: p.Name, Marker: strings.Join(markers, "; "),
		Advice: strings.Join(strings.Fields(advice), " "), Sources: sources}
}

func (t *Table) provider(name string) Provider {
	for _, p := range t.Providers {
		if p.Name == name {
			return p
		}
	}
	return Provider{Name: name}
}

// matchWithWorkload matches ref, or failing that the workload that
// controls it.
func (t *Table) matchWithWorkload(s *snapshot.Snapshot, ref finding.ObjectRef, cluster string) (*Marker, string, bool) {
	meta, _ := s.Meta(ref.Kind, ref.Namespace, ref.Name)
	if m, why, ok := t.match(object{ref, meta}, cluster); ok {
		return m, why, true
	}
	w, ok := workloadOf(s, ref)
	if !ok {
		return nil, "", false
	}
	wmeta, _ := s.Meta(w.Kind, w.Namespace, w.Name)
	m, why, ok := t.match(object{w, wmeta}, cluster)
	if !ok {
		return nil, "", false
	}
	return m, why + " (controls " + ref.String() + ")", true
}

// workloadOf is the workload controlling a Pod or a ReplicaSet.
func workloadOf(s *snapshot.Snapshot, ref finding.ObjectRef) (finding.ObjectRef, bool) {
	switch ref.Kind {
	case "Pod":
		ix := s.Index()
		for _, p := range ix.PodsInNamespace(ref.Namespace) {
			if p.Name != ref.Name {
				continue
			}
			if w, ok := ix.WorkloadOf(p); ok {
				return finding.ObjectRef{APIVersion: w.APIVersion, Kind: w.Kind, Namespace: ref.Namespace, Name: w.Name}, true
			}
		}
	case "ReplicaSet":
		for i := range s.ReplicaSets {
			rs := &s.ReplicaSets[i]
			if rs.Namespace != ref.Namespace || rs.Name != ref.Name {
				continue
			}
			for _, o := range rs.OwnerReferences {
				if o.Controller != nil && *o.Controller {
					return finding.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: ref.Namespace, Name: o.Name}, true
				}
			}
		}
	}
	return finding.ObjectRef{}, false
}
