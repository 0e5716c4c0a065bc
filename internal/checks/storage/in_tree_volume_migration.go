package storage

import (
	_ "embed"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/in-tree-volume-migration.yaml
var migrationYAML []byte

type inTreePlugin struct {
	Provisioner string   `json:"provisioner"`
	Volume      string   `json:"volume"`
	CSIDriver   string   `json:"csiDriver"`
	MigrationOn string   `json:"migrationOn"`
	GA          string   `json:"ga"`
	Sources     []string `json:"sources"`

	on check.KubeVersion
}

// inTreeFacts is data/in-tree-volume-migration.yaml.
type inTreeFacts struct {
	Plugins []inTreePlugin `json:"plugins"`
}

var loadPlugins = check.Facts("in-tree plugin facts", migrationYAML, func(f *inTreeFacts) error {
	for i := range f.Plugins {
		p := &f.Plugins[i]
		v, ok := check.ParseKubeVersion(p.MigrationOn)
		if !ok || p.CSIDriver == "" || len(p.Sources) == 0 {
			return fmt.Errorf("in-tree plugin facts: row %s is incomplete", p.Provisioner)
		}
		p.on = v
	}
	return nil
})

// inTreeVolume is the in-tree plugin a PersistentVolume's source uses, by
// the plugins table's volume names.
func inTreeVolume(pv *corev1.PersistentVolumeSpec) string {
	switch {
	case pv.AWSElasticBlockStore != nil:
		return "awsElasticBlockStore"
	case pv.GCEPersistentDisk != nil:
		return "gcePersistentDisk"
	case pv.AzureDisk != nil:
		return "azureDisk"
	case pv.Cinder != nil:
		return "cinder"
	case pv.AzureFile != nil:
		return "azureFile"
	case pv.VsphereVolume != nil:
		return "vsphereVolume"
	}
	return ""
}

const (
	ruleMigration  = "migrated-without-csi-driver"
	migrationCase  = "eks-123-ebs-csi-migration-pvc-pending-2023"
	defaultSCAnnot = "storageclass.kubernetes.io/is-default-class"
)

func inTreeVolumeMigrationCheck() check.Check {
	return check.Check{
		ID:       "in-tree-volume-migration",
		Title:    "In-tree volumes migrated to a CSI driver that is not installed",
		Severity: finding.High,
		Description: "StorageClasses with an in-tree provisioner (kubernetes.io/aws-ebs, gce-pd, azure-disk, cinder, " +
			"azure-file, vsphere-volume) and PersistentVolumes with the matching in-tree volume source, on a " +
			"control plane at or past the version where CSI migration of that plugin is on by default (a sourced " +
			"table: 1.23 for AWS EBS, GCE PD and Azure Disk; 1.24 for Cinder; 1.26 for Azure File and vSphere), " +
			"while no CSIDriver object of the replacement driver exists. Kubernetes then routes provisioning, " +
			"attaching and mounting to a driver that is not there: new claims stay Pending and pods that move " +
			"cannot mount their volumes. High for PersistentVolumes, Pending claims of such a class and the default " +
			"StorageClass; medium for " +
			"other StorageClasses; low one minor before migration turns on. A CSI driver always registers a " +
			"CSIDriver object, so its absence is reliable when CSIDrivers were read completely.",
		Reads: []check.Input{{Resource: snapshot.StorageClasses}, {Resource: snapshot.PersistentVolumes},
			{Resource: snapshot.PersistentVolumeClaims}, {Resource: snapshot.CSIDrivers}, check.Optional(snapshot.Pods)},
		Rules: []check.Rule{
			{ID: ruleMigration, Summary: "In-tree StorageClasses, volumes and claims whose migrated CSI driver is missing",
				Needs: []snapshot.Resource{snapshot.StorageClasses, snapshot.PersistentVolumes, snapshot.PersistentVolumeClaims, snapshot.CSIDrivers}},
		},
		Cases: check.Prevents(migrationCase),
		Run:   runInTreeMigration,
	}
}

func runInTreeMigration(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadPlugins()
	if err != nil {
		return nil, err
	}
	plugins := facts.Plugins
	s := ctx.Snapshot
	if len(s.StorageClasses)+len(s.PersistentVolumes) == 0 && !ctx.Present(snapshot.StorageClasses) && !ctx.Present(snapshot.PersistentVolumes) {
		return nil, check.NotEvaluated("the input has no StorageClasses or PersistentVolumes")
	}
	drivers := map[string]bool{}
	for i := range s.CSIDrivers {
		drivers[s.CSIDrivers[i].Name] = true
	}
	byProvisioner := map[string]*inTreePlugin{}
	byVolume := map[string]*inTreePlugin{}
	for i := range plugins {
		byProvisioner[plugins[i].Provisioner] = &plugins[i]
		byVolume[plugins[i].Volume] = &plugins[i]
	}
	server, serverEv, known := check.ServerVersion(s)

	type use struct {
		ref   finding.ObjectRef
		sev   finding.Severity
		what  string
		quote []finding.Field // the fields that make it a use, as written
	}
	uses := map[*inTreePlugin][]use{}
	for i := range s.StorageClasses {
		sc := &s.StorageClasses[i]
		if p := byProvisioner[sc.Provisioner]; p != nil {
			sev, what := finding.Medium, fmt.Sprintf("StorageClass %s (provisioner %s)", sc.Name, sc.Provisioner)
			if sc.Annotations[defaultSCAnnot] == "true" {
				sev, what = finding.High, what+", the default class"
			}
			uses[p] = append(uses[p], use{check.Ref("storage.k8s.io/v1", "StorageClass", sc), sev, what,
				[]finding.Field{finding.Value("provisioner", sc.Provisioner)}})
		}
	}
	defaultClass := ""
	classProvisioner := map[string]string{}
	for i := range s.StorageClasses {
		sc := &s.StorageClasses[i]
		classProvisioner[sc.Name] = sc.Provisioner
		if sc.Annotations[defaultSCAnnot] == "true" {
			defaultClass = sc.Name
		}
	}
	for i := range s.PersistentVolumeClaims {
		pvc := &s.PersistentVolumeClaims[i]
		if pvc.Status.Phase != corev1.ClaimPending {
			continue // bound claims are judged through their volumes
		}
		class := defaultClass
		if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		}
		if p := byProvisioner[classProvisioner[class]]; p != nil && class != "" {
			scField := finding.Absent("spec.storageClassName") // the default class
			if pvc.Spec.StorageClassName != nil {
				scField = finding.Value("spec.storageClassName", *pvc.Spec.StorageClassName)
			}
			uses[p] = append(uses[p], use{check.Ref("v1", "PersistentVolumeClaim", pvc), finding.High,
				fmt.Sprintf("PersistentVolumeClaim %s/%s, Pending, of StorageClass %s", pvc.Namespace, pvc.Name, class),
				[]finding.Field{finding.Value("status.phase", pvc.Status.Phase), scField}})
		}
	}
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		if p := byVolume[inTreeVolume(&pv.Spec)]; p != nil {
			what := fmt.Sprintf("PersistentVolume %s (%s)", pv.Name, p.Volume)
			if c := pv.Spec.ClaimRef; c != nil {
				what += fmt.Sprintf(", bound to %s/%s", c.Namespace, c.Name)
			}
			var quote []finding.Field
			if c := pv.Spec.ClaimRef; c != nil {
				quote = append(quote, finding.Value("spec.claimRef.namespace", c.Namespace), finding.Value("spec.claimRef.name", c.Name))
			}
			uses[p] = append(uses[p], use{check.Ref("v1", "PersistentVolume", pv), finding.High, what, quote})
		}
	}
	if len(uses) == 0 {
		return nil, nil
	}
	if !known {
		ctx.Skip(ruleMigration, "the input has no control plane version to compare with the migration table")
		return nil, nil
	}
	var out []finding.Finding
	for i := range plugins {
		p := &plugins[i]
		us := uses[p]
		if len(us) == 0 || drivers[p.CSIDriver] {
			continue
		}
		if !ctx.Complete(snapshot.CSIDrivers) {
			ctx.Incomplete(ruleMigration, "CSIDriver %s is not in the input, which does not hold every CSIDriver", p.CSIDriver)
			continue
		}
		behind := p.on.MinorsBehind(server)
		if behind < -1 {
			continue // more than one minor before migration turns on
		}
		sev := finding.Info
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		for _, u := range us {
			sev = max(sev, u.sev)
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, u.ref)
			}
			if len(ev) < check.MaxEvidence {
				ev = append(ev, u.what)
				if len(u.quote) > 0 {
					items = append(items, finding.Quote(u.ref, u.quote...))
				}
			}
		}
		when := fmt.Sprintf("CSI migration of %s is on by default from %s", p.Provisioner, p.on.MinorString())
		if behind == -1 {
			sev = finding.Low
			when = fmt.Sprintf("CSI migration of %s turns on by default at %s, the next minor", p.Provisioner, p.on.MinorString())
		}
		ev = append(ev, serverEv, when, fmt.Sprintf("no CSIDriver %s exists; sources: %s", p.CSIDriver, strings.Join(p.Sources, " ")))
		f := finding.Finding{
			Check: "in-tree-volume-migration", Severity: sev,
			Title: fmt.Sprintf("%s %s, migrated to %s, which is not installed", check.Subject(len(us), "object", "objects", "uses", "use"), p.Provisioner, p.CSIDriver),
			Message: fmt.Sprintf("With CSI migration on, Kubernetes hands every operation on %s volumes to the %s driver. "+
				"Without it, new claims of these classes stay Pending and pods that move cannot attach or mount these volumes.",
				p.Provisioner, p.CSIDriver),
			Objects:     objs,
			Evidence:    ev,
			Remediation: fmt.Sprintf("Install the %s CSI driver (on EKS, the Amazon EBS CSI add-on with its IAM role) before relying on these volumes or upgrading; then move StorageClasses to the CSI provisioner.", p.CSIDriver),
			Cases:       []string{migrationCase},
		}
		f.AddEvidence(items...)
		out = append(out, f)
	}
	return out, nil
}
