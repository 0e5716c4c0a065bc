package storage

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestInTreeMigrationGap(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    finding.Severity
	}{{"v1.23.17-eks-1234", finding.High}, {"v1.22.9", finding.Low}, {"v1.21.5", -1}} {
		s := checktest.Complete(checktest.Load(t, "migration-gap.yaml"))
		s.Source.ServerVersion = tc.version
		fs, _, _ := checktest.Run(t, inTreeVolumeMigrationCheck(), s)
		if tc.want < 0 {
			if len(fs) != 0 {
				t.Errorf("%s: findings %+v, want none", tc.version, fs)
			}
			continue
		}
		if len(fs) != 1 || fs[0].Severity != tc.want || !checktest.HasObject(fs, "StorageClass", "", "gp2") ||
			!checktest.HasObject(fs, "PersistentVolume", "", "pvc-0a1b2c") ||
			!checktest.HasObject(fs, "PersistentVolumeClaim", "shop", "data-postgres-1") {
			t.Errorf("%s: findings %+v, want one %v naming gp2 and the volume", tc.version, fs, tc.want)
		}
	}
}

func TestInTreeMigrationOpenWorldAndUnknownVersion(t *testing.T) {
	s := checktest.Load(t, "migration-gap.yaml")
	s.Source.ServerVersion = "v1.30.0"
	fs, ctx, _ := checktest.Run(t, inTreeVolumeMigrationCheck(), s)
	if len(fs) != 0 {
		t.Errorf("concluded a missing CSIDriver from files: %+v", fs)
	}
	if _, ok := ctx.Notes()[ruleMigration]; !ok {
		t.Error("no incomplete note")
	}
	s = checktest.Complete(checktest.Load(t, "migration-gap.yaml"))
	fs, ctx, _ = checktest.Run(t, inTreeVolumeMigrationCheck(), s)
	if n, ok := ctx.Notes()[ruleMigration]; len(fs) != 0 || !ok || !n.Skipped {
		t.Errorf("no version: findings %+v, notes %v", fs, ctx.Notes())
	}
}

func TestInTreeMigrationHealthyPasses(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "migration-ok.yaml"))
	s.Source.ServerVersion = "v1.30.0"
	checktest.Quiet(t, inTreeVolumeMigrationCheck(), s)
}
