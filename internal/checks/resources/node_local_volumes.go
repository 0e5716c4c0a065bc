package resources

import (
	_ "embed"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ruleUnboundedLocalVolumes is node-disk-drift's rule for node-local
// volumes whose claimed size nothing enforces, on the node's root disk.
const ruleUnboundedLocalVolumes = "unbounded-local-volumes"

// provisionedByAnnotation is what the external provisioner library writes
// on the volumes it creates: the provisioner's name, for a PV whose
// StorageClass is gone or was not read.
const provisionedByAnnotation = "pv.kubernetes.io/provisioned-by"

//go:embed data/node-local-volumes.yaml
var localVolumesYAML []byte

type localVolumeProvisioner struct {
	Name             string   `json:"name"`
	Project          string   `json:"project"`
	DefaultBasePath  string   `json:"defaultBasePath"`
	ConfigAnnotation string   `json:"configAnnotation"`
	QuotaParameters  []string `json:"quotaParameters"`
	Case             string   `json:"case"`
	Facts            []string `json:"facts"`
	Sources          []string `json:"sources"`
}

type localVolumeFacts struct {
	Provisioners []localVolumeProvisioner `json:"provisioners"`
}

var loadLocalVolumes = check.Facts("data/node-local-volumes.yaml", localVolumesYAML, func(f *localVolumeFacts) error {
	const file = "data/node-local-volumes.yaml"
	if len(f.Provisioners) == 0 {
		return fmt.Errorf("%s: no provisioners", file)
	}
	for _, p := range f.Provisioners {
		if p.Name == "" || p.Project == "" || !path.IsAbs(p.DefaultBasePath) || p.ConfigAnnotation == "" ||
			len(p.QuotaParameters) == 0 || p.Case == "" || len(p.Facts) == 0 || len(p.Sources) == 0 {
			return fmt.Errorf("%s: provisioner %q needs a project, an absolute defaultBasePath, a configAnnotation, "+
				"quotaParameters, a case, facts and sources", file, p.Name)
		}
		for _, s := range p.Sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("%s: provisioner %q: source %q is not an https URL", file, p.Name, s)
			}
		}
	}
	return nil
})

// unboundedVolume is one PV of a listed provisioner under its default base
// path, with no quota on its StorageClass.
type unboundedVolume struct {
	pv       *corev1.PersistentVolume
	dirField string // spec.local.path or spec.hostPath.path
	dir      string
}

// unboundedLocalVolumeFindings flags, per StorageClass, the volumes of a
// listed provisioner that sit under its default base path (the root disk)
// while the StorageClass enables no quota: the claim's capacity is then no
// limit, and a volume that outgrows it fills the disk the node's pods and
// kubelet share, until DiskPressure evicts pods that are not its owner's.
func unboundedLocalVolumeFindings(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadLocalVolumes()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if !ctx.Present(snapshot.PersistentVolumes) {
		ctx.Skip(ruleUnboundedLocalVolumes, "PersistentVolumes were not read")
		return nil, nil
	}
	classes := map[string]*storagev1.StorageClass{}
	for i := range s.StorageClasses {
		classes[s.StorageClasses[i].Name] = &s.StorageClasses[i]
	}
	type group struct {
		prov  *localVolumeProvisioner
		class *storagev1.StorageClass
		vols  []unboundedVolume
	}
	groups := map[string]*group{}
	var noClass, elsewhere int
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		class := classes[pv.Spec.StorageClassName]
		prov := provisionerOf(facts, pv, class)
		if prov == nil {
			continue
		}
		field, dir := localDir(pv)
		if dir == "" {
			continue
		}
		if !underDir(dir, prov.DefaultBasePath) {
			// A base path of its own is how a separate disk is used; whether
			// it is one the API does not show.
			elsewhere++
			continue
		}
		if class == nil {
			noClass++
			continue
		}
		quota, ok := quotaEnabled(prov, class)
		if !ok {
			noClass++
			continue
		}
		if quota {
			continue
		}
		g := groups[class.Name]
		if g == nil {
			g = &group{prov: prov, class: class}
			groups[class.Name] = g
		}
		g.vols = append(g.vols, unboundedVolume{pv: pv, dirField: field, dir: dir})
	}
	if noClass > 0 {
		ctx.Incomplete(ruleUnboundedLocalVolumes, "%s of a node-local provisioner have a StorageClass that was not read "+
			"or whose settings do not parse: whether it enforces a quota is unknown", check.Plural(noClass, "volume", "volumes"))
	}
	if elsewhere > 0 {
		ctx.Unknowable(ruleUnboundedLocalVolumes, "%s of a node-local provisioner live outside its default base path: "+
			"whether that directory is on the root disk is not visible through the API", check.Plural(elsewhere, "volume", "volumes"))
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []finding.Finding
	for _, n := range names {
		g := groups[n]
		out = append(out, unboundedFinding(g.prov, g.class, g.vols))
	}
	return out, nil
}

// provisionerOf is the listed provisioner that made pv: its StorageClass's
// provisioner when the class was read, else the PV's own annotation.
func provisionerOf(facts *localVolumeFacts, pv *corev1.PersistentVolume, class *storagev1.StorageClass) *localVolumeProvisioner {
	name := pv.Annotations[provisionedByAnnotation]
	if class != nil {
		name = class.Provisioner
	}
	for i := range facts.Provisioners {
		if facts.Provisioners[i].Name == name {
			return &facts.Provisioners[i]
		}
	}
	return nil
}

func localDir(pv *corev1.PersistentVolume) (field, dir string) {
	switch {
	case pv.Spec.Local != nil && pv.Spec.Local.Path != "":
		return "spec.local.path", pv.Spec.Local.Path
	case pv.Spec.HostPath != nil && pv.Spec.HostPath.Path != "":
		return "spec.hostPath.path", pv.Spec.HostPath.Path
	}
	return "", ""
}

func underDir(dir, base string) bool {
	dir, base = path.Clean(dir), path.Clean(base)
	return dir == base || strings.HasPrefix(dir, base+"/")
}

// quotaEnabled reads the provisioner's settings annotation on class: true
// when one of its quota parameters is enabled; ok false when the
// annotation does not parse, so the answer is unknown.
func quotaEnabled(prov *localVolumeProvisioner, class *storagev1.StorageClass) (quota, ok bool) {
	raw, present := class.Annotations[prov.ConfigAnnotation]
	if !present || strings.TrimSpace(raw) == "" {
		return false, true
	}
	var entries []struct {
		Name string `json:"name"`
		// enabled is written "true" in OpenEBS's examples; a bare YAML
		// true means the same.
		Enabled any `json:"enabled"`
	}
	if err := yaml.Unmarshal([]byte(raw), &entries); err != nil {
		return false, false
	}
	for _, e := range entries {
		if slices.Contains(prov.QuotaParameters, e.Name) && strings.EqualFold(strings.TrimSpace(fmt.Sprint(e.Enabled)), "true") {
			return true, true
		}
	}
	return false, true
}

func unboundedFinding(prov *localVolumeProvisioner, class *storagev1.StorageClass, vols []unboundedVolume) finding.Finding {
	sort.Slice(vols, func(i, j int) bool { return vols[i].pv.Name < vols[j].pv.Name })
	classRef := finding.ObjectRef{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: class.Name}
	objs := []finding.ObjectRef{classRef}
	var ev []string
	var items []finding.EvidenceItem
	for i, v := range vols {
		if i == check.MaxEvidence {
			break
		}
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "PersistentVolume", Name: v.pv.Name}
		objs = append(objs, ref)
		capacity := v.pv.Spec.Capacity[corev1.ResourceStorage]
		claim := "no claim"
		if c := v.pv.Spec.ClaimRef; c != nil {
			claim = "claim " + c.Namespace + "/" + c.Name
		}
		ev = append(ev, fmt.Sprintf("PersistentVolume %s (%s): %s %s, capacity %s", v.pv.Name, claim, v.dirField, v.dir, capacity.String()))
		items = append(items, finding.Quote(ref, finding.Value(v.dirField, v.dir), finding.Value("spec.capacity.storage", capacity.String())))
	}
	more := len(vols) - min(len(vols), check.MaxEvidence)
	for _, fact := range prov.Facts {
		ev = append(ev, strings.Join(strings.Fields(fact), " ")+" ("+strings.Join(prov.Sources, " ")+")")
	}
	f := finding.Finding{
		Check: diskDriftID, Rule: ruleUnboundedLocalVolumes, Severity: finding.Medium,
		Title: fmt.Sprintf("%s of StorageClass %s live on the nodes' root disk with no size limit%s",
			check.Plural(len(vols), "volume", "volumes"), class.Name, check.MoreText(more)),
		Message: fmt.Sprintf("StorageClass %s (provisioner %s, %s) enables none of %s, and these volumes sit under %s, "+
			"the provisioner's default base path, which is on the node's root disk unless a disk of its own is mounted "+
			"there. The capacity their claims ask for is then no "+
			"limit: a volume that keeps growing (logs, metrics, a database's archive) fills the filesystem that the node's "+
			"images, container logs and other pods share, and the kubelet's DiskPressure evictions, which ignore "+
			"PodDisruptionBudgets, remove pods that have nothing to do with it.",
			class.Name, prov.Name, prov.Project, strings.Join(prov.QuotaParameters, " or "), prov.DefaultBasePath),
		Objects:  objs,
		Evidence: ev,
		Remediation: fmt.Sprintf("Enable %s in the StorageClass's %s annotation on a base path whose filesystem is mounted "+
			"with project quotas, or move the base path to a disk of its own; new volumes pick the change up, existing ones "+
			"keep the directory they were created with. Meanwhile bound what the workloads write (retention) and watch "+
			"the nodes' root filesystem.", strings.Join(prov.QuotaParameters, " or "), prov.ConfigAnnotation),
		Cases: []string{prov.Case},
	}
	f.AddEvidence(finding.Quote(classRef, finding.Value("provisioner", class.Provisioner)))
	f.AddEvidence(items...)
	return f
}
