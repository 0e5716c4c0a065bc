package storage

// The immediate-zonal-class rule of pv-zone-schedulability: zonal
// StorageClasses that bind immediately in a cluster whose nodes span zones.

import (
	"fmt"
	"sort"
	"strings"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func immediateFindings(ctx *check.Context, facts *zonalFacts, s *snapshot.Snapshot, zones map[string]bool, zoneItems func() []finding.EvidenceItem) []finding.Finding {
	if len(zones) < 2 {
		if !ctx.Complete(snapshot.Nodes) {
			ctx.Incomplete(ruleImmediate, "the Nodes in the input span %d zones; other Nodes may span more", len(zones))
		}
		return nil
	}
	var objs []finding.ObjectRef
	var ev []string
	var items []finding.EvidenceItem
	for i := range s.StorageClasses {
		sc := &s.StorageClasses[i]
		immediate := sc.VolumeBindingMode == nil || *sc.VolumeBindingMode == storagev1.VolumeBindingImmediate
		if !immediate || len(sc.AllowedTopologies) > 0 || !facts.zonal(sc) {
			continue
		}
		objs = append(objs, check.Ref("storage.k8s.io/v1", "StorageClass", sc))
		mode := "Immediate"
		if sc.VolumeBindingMode == nil {
			mode = "unset (Immediate)"
		}
		ev = append(ev, fmt.Sprintf("StorageClass %s: provisioner %s, volumeBindingMode %s, no allowedTopologies", sc.Name, sc.Provisioner, mode))
		modeField := finding.Absent("volumeBindingMode")
		if sc.VolumeBindingMode != nil {
			modeField = finding.Value("volumeBindingMode", string(*sc.VolumeBindingMode))
		}
		items = append(items, finding.Quote(objs[len(objs)-1], finding.Value("provisioner", sc.Provisioner), modeField,
			finding.Absent("allowedTopologies")))
	}
	if len(objs) == 0 {
		return nil
	}
	zl := make([]string, 0, len(zones))
	for z := range zones {
		zl = append(zl, z)
	}
	sort.Strings(zl)
	ev = append(ev, "Nodes span zones "+check.ListText(zl, 10), facts.BindingModes[0].What+"; sources: "+strings.Join(facts.BindingModes[0].Sources, " "))
	f := finding.Finding{
		Check: "pv-zone-schedulability", Severity: finding.Medium,
		Title: fmt.Sprintf("%s provision zonal volumes before their pods are placed", check.Plural(len(objs), "StorageClass", "StorageClasses")),
		Message: "With Immediate binding a zonal volume's zone is picked when the claim is created, without regard to where " +
			"its pod can run; in a multi-zone cluster the pod may then fit no node in that zone and stay Pending.",
		Objects:     objs,
		Evidence:    ev,
		Remediation: "Use volumeBindingMode WaitForFirstConsumer for zonal StorageClasses (or restrict them with allowedTopologies).",
		Cases:       []string{zoneCase},
	}
	f.AddEvidence(items...)
	f.AddEvidence(zoneItems()...)
	return []finding.Finding{f}
}
