package resources

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func localVolumeFindings(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Rule == ruleUnboundedLocalVolumes {
			out = append(out, f)
		}
	}
	return out
}

// SREGym#537's volume before it grew: openebs-hostpath, no quota, under
// /var/openebs/local.
func TestUnboundedLocalVolumesGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/local-volumes-gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	local := localVolumeFindings(fs)
	if len(local) != 1 || len(fs) != 1 {
		t.Fatalf("want one unbounded-local-volumes finding and nothing else, got %+v", fs)
	}
	f := local[0]
	if f.Severity != finding.Medium || len(f.Cases) != 1 || f.Cases[0] != openebsHostpathCase {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	if !checktest.HasObject(local, "PersistentVolume", "", "pvc-0b6b4b61-765c-4b90-950d-7f7167c5c9d6") ||
		!checktest.HasObject(local, "StorageClass", "", "openebs-hostpath") {
		t.Errorf("objects %+v", f.Objects)
	}
}

// A quota on the class, or a volume of another provisioner: nothing to say.
func TestUnboundedLocalVolumesQuotaPasses(t *testing.T) {
	checktest.Quiet(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/local-volumes-ok.yaml")))
}

// A base path other than the default may be a disk of its own: not
// flagged, and not passed either.
func TestUnboundedLocalVolumesElsewhereUnknown(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/local-volumes-elsewhere.yaml")))
	if len(localVolumeFindings(fs)) != 0 {
		t.Errorf("flagged a volume outside the default base path: %+v", fs)
	}
	if _, noted := ctx.Notes()[ruleUnboundedLocalVolumes]; !noted {
		t.Errorf("no note for a volume whose disk is unknown: %v", ctx.Notes())
	}
}

// Without its StorageClass, whether a volume has a quota is unknown.
func TestUnboundedLocalVolumesClassUnread(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "node-disk-drift/local-volumes-gap.yaml"))
	s.StorageClasses = nil
	fs, ctx, _ := checktest.Run(t, nodeDiskDriftCheck(), s)
	if len(localVolumeFindings(fs)) != 0 {
		t.Errorf("judged a volume whose class was not read: %+v", fs)
	}
	if n, noted := ctx.Notes()[ruleUnboundedLocalVolumes]; !noted || n.Skipped {
		t.Errorf("want a partial note, got %v", ctx.Notes())
	}
}

// Files without PersistentVolumes: the rule did not run.
func TestUnboundedLocalVolumesSkippedWithoutVolumes(t *testing.T) {
	_, ctx, _ := checktest.Run(t, nodeDiskDriftCheck(), checktest.Load(t, "node-disk-drift/ok.yaml"))
	if n, noted := ctx.Notes()[ruleUnboundedLocalVolumes]; !noted || !n.Skipped {
		t.Errorf("want a skip note, got %v", ctx.Notes())
	}
}
